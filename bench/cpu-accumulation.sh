#!/bin/bash
# The cost of gradient accumulation on the CPU at small micro-batches:
# fashion_mlp at effective batch 256 as 1 × 256, 8 × 32 (32 samples, 8
# accumulation steps) and 32 × 8, each with gacc's default step (wide
# layers' weight gradients computed once per window where the cost model
# says so, gacc-defer-weight-gradients) and with
# --defer-weight-gradients=false (every weight gradient accumulated per
# micro-batch), runs alternating, ROUNDS rounds (default 3) of STEPS
# optimizer steps (default 400). Prints the median of the rounds' median
# ms per optimizer step, its ratio to 1 × 256, and the largest relative
# difference between the two variants' parameters after 20 steps.
# Issue 15's target: 8 × 32 at most 1.15 × and 32 × 8 at most 1.5 × the
# 1 × 256 step.
#
#   bench/cpu-accumulation.sh [BUILD_DIR]     (default: build)
set -euo pipefail
build=${1:-build}
steps=${STEPS:-400}
rounds=${ROUNDS:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() { # micro-batch accum-steps defer
  "$build/bin/gacc-run" "$here/examples/fashion_mlp.mlir" --micro-batch "$1" \
    --accum-steps "$2" --defer-weight-gradients="$3" --max-steps "$steps" \
    --no-eval | sed -n 's/^summary: .*median \([0-9.]*\) ms\/step.*/\1/p'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
declare -A ms
for ((r = 0; r < rounds; ++r)); do
  for shape in "256 1" "32 8" "8 32"; do
    for defer in true false; do
      echo "$(run $shape $defer)" >> "$tmp/${shape// /x}-$defer"
    done
  done
done
for shape in "256 1" "32 8" "8 32"; do
  for defer in true false; do
    ms[${shape// /x}-$defer]=$(median < "$tmp/${shape// /x}-$defer")
  done
done
printf "%-12s %14s %8s %14s %8s %10s\n" "m × N" "default ms" "ratio" \
  "no-defer ms" "ratio" "params"
for shape in "256 1" "32 8" "8 32"; do
  set -- $shape
  for defer in true false; do
    "$build/bin/gacc-run" "$here/examples/fashion_mlp.mlir" --micro-batch "$1" \
      --accum-steps "$2" --defer-weight-gradients=$defer --max-steps 20 \
      --no-eval --save-params "$tmp/$1-$defer.safetensors" > /dev/null
  done
  diff=$(/usr/bin/python3 "$here/test/integration/cpu/Inputs/compare_params.py" \
           "$tmp/$1-true.safetensors" "$tmp/$1-false.safetensors" --tol 1 |
         sed -n 's/^max relative difference (max) \([^ ]*\).*/\1/p')
  k=$1x$2
  printf "%-12s %14s %8s %14s %8s %10s\n" "$1 × $2" "${ms[$k-true]}" \
    "$(awk -v a="${ms[$k-true]}" -v b="${ms[256x1-true]}" 'BEGIN { printf "%.2f", a / b }')" \
    "${ms[$k-false]}" \
    "$(awk -v a="${ms[$k-false]}" -v b="${ms[256x1-false]}" 'BEGIN { printf "%.2f", a / b }')" \
    "$diff"
done
