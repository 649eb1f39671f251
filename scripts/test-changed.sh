#!/usr/bin/env bash
# `pnpm test:changed [base]`: the jest files of every workspace package that changed since `base` (default main;
# changes in the working tree count, untracked files do not) and of every package that depends on one of them.
# Jest's own --changedSince follows imports within one package only, not into the packages it imports.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
base="${1:-main}"

patterns=()
while IFS= read -r dir; do
  [ "$dir" = "$root" ] || patterns+=("^$dir/")
done < <(pnpm ls --recursive --depth -1 --parseable --filter "...[$base]")

if [ ${#patterns[@]} -eq 0 ]; then
  echo "no workspace package changed since $base (changes at the root, such as jest.config.js, need pnpm test)"
  exit 0
fi
printf 'the tests of %s\n' "${patterns[@]#^$root/}"
pnpm run jest "${patterns[@]}" "${@:2}"
