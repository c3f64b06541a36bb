#!/bin/bash
# kjv_char's optimizer step on the CPU, gacc against PyTorch 1.13 eager (2
# threads) for the same model, shapes and schedule (4 × 16 verses of 527
# positions, SGD with momentum), side by side: gacc's median ms per
# optimizer step over STEPS steps (default 30) on the KJV verses, PyTorch's
# median over 10 steps on random tokens (bench/torch_kjv_char.py). Issue
# 15's target is gacc ≤ 0.5 × PyTorch. ROUNDS (default 3) alternating
# rounds; the median of each side's round medians.
#
#   bench/cpu-kjv-char.sh [BUILD_DIR]     (default: build)
set -euo pipefail
build=${1:-build}
steps=${STEPS:-30}
rounds=${ROUNDS:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
gacc=() torch=()
for ((r = 0; r < rounds; ++r)); do
  gacc+=("$("$build/bin/gacc-run" "$here/examples/kjv_char.mlir" --dataset kjv \
              --max-steps "$steps" --no-eval |
            sed -n 's/^summary: .*median \([0-9.]*\) ms\/step.*/\1/p')")
  torch+=("$(/usr/bin/python3 "$here/bench/torch_kjv_char.py" |
             sed -n 's/.*median_step_ms=\([0-9.]*\)/\1/p')")
done
g=$(printf "%s\n" "${gacc[@]}" | median)
t=$(printf "%s\n" "${torch[@]}" | median)
printf "%-10s %10s %10s %8s\n" example "gacc ms" "torch ms" ratio
printf "%-10s %10s %10s %8s\n" kjv_char "$g" "$t" \
  "$(awk -v a="$g" -v b="$t" 'BEGIN { printf "%.2f", a / b }')"
echo "rounds: gacc ${gacc[*]}; torch ${torch[*]}"
