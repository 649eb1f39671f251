#!/usr/bin/env bash
# Makes sure the programs the tests need beyond Node are installed: Go with Debian's sprig and sigs.k8s.io/yaml
# (the chart tests render the Helm chart with a small Go program; there is no helm binary here).
# As root with apt-get, it installs what is missing; otherwise it names exactly what to install, and fails.
set -euo pipefail

GOCODE=/usr/share/gocode/src
PACKAGES=(golang-go golang-github-masterminds-sprig-dev golang-k8s-sigs-yaml-dev)

missing=()
command -v go >/dev/null 2>&1 || missing+=(golang-go)
[ -d "$GOCODE/github.com/Masterminds/sprig" ] || missing+=(golang-github-masterminds-sprig-dev)
[ -d "$GOCODE/sigs.k8s.io/yaml" ] || missing+=(golang-k8s-sigs-yaml-dev)
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing ${missing[*]} (the chart tests need them)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${PACKAGES[@]}" >/dev/null
  # A Go installed just now is in /usr/bin, already on PATH; check once more rather than trust apt's exit code.
  command -v go >/dev/null 2>&1 && [ -d "$GOCODE/github.com/Masterminds/sprig" ] && [ -d "$GOCODE/sigs.k8s.io/yaml" ] \
    && exit 0
  echo "installing ${PACKAGES[*]} did not provide go and $GOCODE/{github.com/Masterminds/sprig,sigs.k8s.io/yaml}" >&2
  exit 1
fi

cat >&2 <<EOF
The chart tests need Go with Debian's sprig and yaml libraries, and these are missing: ${missing[*]}.
Install them as root, then run the tests again:
  apt-get update && apt-get install -y ${PACKAGES[*]}
EOF
exit 1
