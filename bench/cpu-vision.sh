#!/bin/bash
# The CNN examples' optimizer step on the CPU, gacc against PyTorch 1.13
# eager (2 threads) for the same model and schedule (8 × 32, SGD with
# momentum), side by side: examples/fashion_cnn.mlir (BatchNorm) and
# examples/fashion_cnn_groupnorm.mlir. Median ms per optimizer step over
# STEPS steps (default 30); the issue's target is gacc ≤ 0.5 × PyTorch.
#
#   bench/cpu-vision.sh [BUILD_DIR]     (default: build)
set -euo pipefail
build=${1:-build}
steps=${STEPS:-30}
here=$(cd "$(dirname "$0")/.." && pwd)
printf "%-24s %12s %12s %8s\n" example "gacc ms" "torch ms" "ratio"
for pair in fashion_cnn:batch fashion_cnn_groupnorm:group; do
  name=${pair%%:*}
  gacc=$("$build/bin/gacc-run" "$here/examples/$name.mlir" --max-steps "$steps" --no-eval |
         sed -n 's/^summary: .*median \([0-9.]*\) ms\/step.*/\1/p')
  torch=$(/usr/bin/python3 "$here/bench/torch_fashion_cnn.py" "${pair##*:}" "$steps" |
          sed -n 's/^median_step_ms \([0-9.]*\)/\1/p')
  printf "%-24s %12s %12s %8s\n" "$name" "$gacc" "$torch" \
    "$(awk -v a="$gacc" -v b="$torch" 'BEGIN { printf "%.2f", a / b }')"
done
