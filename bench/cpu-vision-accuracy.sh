#!/bin/bash
# examples/fashion_cnn.mlir's test accuracy after 3 epochs on the CPU, in
# gacc and in PyTorch 1.13 with the same recipe
# (bench/torch_fashion_cnn_accuracy.py), side by side for each seed. The
# issue's target is 0.90; a seed changes the initialization and the sample
# order (in each framework its own way, so a seed's two figures are not
# the same run).
#
#   bench/cpu-vision-accuracy.sh [BUILD_DIR]    (default: build; SEEDS="0 1 2")
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")/.." && pwd)
printf "%-6s %10s %10s\n" seed gacc torch
for seed in ${SEEDS:-0 1 2}; do
  gacc=$("$build/bin/gacc-run" "$here/examples/fashion_cnn.mlir" --epochs 3 --seed "$seed" |
         sed -n 's/^epoch 3 *test_accuracy \([0-9.]*\).*/\1/p')
  torch=$(/usr/bin/python3 "$here/bench/torch_fashion_cnn_accuracy.py" "$seed" 3 |
          sed -n 's/^epoch 3 test_accuracy \([0-9.]*\)/\1/p')
  printf "%-6s %10s %10s\n" "$seed" "$gacc" "$torch"
done
