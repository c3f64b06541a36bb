#!/usr/bin/env bash
# Runs the lit suite (check-gacc) and closes with one summary line,
# "tests: N passed, N failed, N skipped" (skipped = UNSUPPORTED, e.g. no ptxas).
set -uo pipefail
build=${1:-build}
log=$(mktemp)
ninja -C "$build" check-gacc 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
count() { grep -E "^\s+$1\s*: +[0-9]+" "$log" | grep -oE '[0-9]+' | head -1; }
passed=$(count Passed); failed=$(count Failed); unsupported=$(count Unsupported)
xfail=$(count "Expectedly Failed")
rm -f "$log"
echo "tests: $(( ${passed:-0} + ${xfail:-0} )) passed, ${failed:-0} failed, ${unsupported:-0} skipped"
exit "$status"
