#!/usr/bin/env bash
# `pnpm test` after its set-up and build: the static checks (proto drift, layering, lint) and jest run side by
# side. Jest's workers spend much of their time waiting on PostgreSQL, NATS and child processes, and the checks
# (lint is mostly single-threaded type-aware rules) fill those gaps instead of running before any test starts
# (docs/testing.md, "What pnpm test runs"). Each check's output is kept and printed after jest; any failure fails
# the command. Arguments go on to jest.
set -uo pipefail
cd "$(dirname "$0")/.."

checks_log=$(mktemp)
trap 'rm -f "$checks_log"' EXIT
(
  set -e
  pnpm run proto:check
  pnpm run depcheck
  pnpm run lint
) >"$checks_log" 2>&1 &
checks_pid=$!

pnpm run jest "$@"
jest_status=$?

wait "$checks_pid"
checks_status=$?
if [ "$checks_status" -ne 0 ]; then
  cat "$checks_log"
  echo "static checks failed (proto:check, depcheck or lint): exit $checks_status" >&2
else
  echo "static checks passed: proto:check, depcheck, lint"
fi
[ "$jest_status" -eq 0 ] && [ "$checks_status" -eq 0 ]
