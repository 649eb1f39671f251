#!/bin/sh
# Fails when the committed generated code differs from what the .proto files generate now (stale or hand-edited).
# Usage: check-generated.sh [generated-dir]   (default: this package's src/generated)
set -eu
package_dir=$(cd "$(dirname "$0")/.." && pwd)
committed=$(cd "${1:-$package_dir/src/generated}" && pwd)
fresh_root=$(mktemp -d)
trap 'rm -rf "$fresh_root"' EXIT

cd "$package_dir"
node_modules/.bin/buf lint ../../proto
node_modules/.bin/buf generate ../../proto --template ../../proto/buf.gen.yaml -o "$fresh_root"

if ! diff -r "$committed" "$fresh_root/src/generated" >"$fresh_root/generated.diff"; then
  echo "Generated protobuf code is stale: $committed differs from what proto/ generates." >&2
  head -n 60 "$fresh_root/generated.diff" >&2
  echo "Run 'pnpm proto:generate' and commit packages/proto/src/generated." >&2
  exit 1
fi
echo "Generated protobuf code is up to date."
