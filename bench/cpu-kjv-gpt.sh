#!/bin/bash
# examples/kjv_gpt.mlir's optimizer step on the CPU, gacc against PyTorch
# 1.13 eager (2 threads) for the same model, data and schedule (4 pre-LN
# blocks, d_model 128, T = 128, 4 × 16 chunks, AdamW, clipping),
# side by side: gacc's median ms per optimizer step over STEPS steps
# (default 30) and PyTorch's over the same number (bench/torch_kjv_gpt.py,
# the anchor behind issue 12's figure, which also evaluates the validation
# chunks at the end, outside its timing). Issue 12's target is gacc ≤ 0.5 ×
# PyTorch. ROUNDS (default 2) alternating rounds; the median of each
# side's round medians.
#
#   bench/cpu-kjv-gpt.sh [BUILD_DIR]     (default: build)
set -euo pipefail
build=${1:-build}
steps=${STEPS:-30}
rounds=${ROUNDS:-2}
here=$(cd "$(dirname "$0")/.." && pwd)
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
gacc=() torch=()
for ((r = 0; r < rounds; ++r)); do
  gacc+=("$("$build/bin/gacc-run" "$here/examples/kjv_gpt.mlir" --dataset kjv-text \
              --max-steps "$steps" --no-eval |
            sed -n 's/^summary: .*median \([0-9.]*\) ms\/step.*/\1/p')")
  torch+=("$(/usr/bin/python3 "$here/bench/torch_kjv_gpt.py" "$steps" 4 128 4 128 3e-3 |
             sed -n 's/.*median_step_ms=\([0-9.]*\).*/\1/p')")
done
g=$(printf "%s\n" "${gacc[@]}" | median)
t=$(printf "%s\n" "${torch[@]}" | median)
printf "%-10s %10s %10s %8s\n" example "gacc ms" "torch ms" ratio
printf "%-10s %10s %10s %8s\n" kjv_gpt "$g" "$t" \
  "$(awk -v a="$g" -v b="$t" 'BEGIN { printf "%.2f", a / b }')"
echo "rounds: gacc ${gacc[*]}; torch ${torch[*]}"
