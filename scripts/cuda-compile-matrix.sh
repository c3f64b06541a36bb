#!/bin/bash
# Compiles every example, and bf16/fp16 variants and the GPT-2-small-shaped
# step of bench/gpu.sh, to cubin (ptxas included) under each cuda form
# that gacc-run and bench/gpu.sh use: eager and --cuda-graph, cuBLAS and
# cuBLASLt, --arena-update, resumable (checkpoints), cuDNN attention,
# --fp32-storage, no BLAS, cuBLASLt's GELU epilogues. No GPU needed: what
# fails here (ptxas refusing a kernel, a pipeline error) would fail on the
# device after its start-up.
# The lit tests compile only some of these forms to cubin; this is the
# whole set, about 15 minutes on 2 cores.
# Usage: scripts/cuda-compile-matrix.sh [BUILD_DIR]   (default build)
set -u
cd "$(dirname "$0")/.."
OPT=${1:-build}/bin/gacc-opt
[ -x "$OPT" ] || { echo "cuda-compile-matrix: no $OPT (build first)"; exit 2; }
command -v ptxas > /dev/null || [ -x /usr/local/cuda/bin/ptxas ] ||
  { echo "cuda-compile-matrix: no ptxas (the CUDA toolkit)"; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed 's/seed = 0 : i64}/seed = 0 : i64, precision = #gacc.precision<bf16>}/' examples/kjv_gpt.mlir > "$work/kjv_gpt_bf16.mlir"
sed 's/seed = 0 : i64}/seed = 0 : i64, precision = #gacc.precision<bf16>}/' examples/fashion_cnn.mlir > "$work/fashion_cnn_bf16.mlir"
sed 's/#gacc.sgd<lr = 0.05, momentum = 0.9>/#gacc.sgd<lr = 0.05, momentum = 0.9>, precision = #gacc.precision<fp16>, loss_scaling = #gacc.loss_scaling<init_scale = 1024.0>/' examples/fashion_mlp.mlir > "$work/fashion_mlp_fp16.mlir"
python3 scripts/make-gpt.py --preset gpt2-small -o "$work/gpt2_small.mlir" || exit 2
models=(examples/*.mlir "$work/kjv_gpt_bf16.mlir" "$work/fashion_cnn_bf16.mlir" "$work/fashion_mlp_fp16.mlir" "$work/gpt2_small.mlir")
configs=("cublas=true" "cublas=true cublaslt=true" "cublas=true resumable=true"
  "cuda-graph=true cublas=true" "cuda-graph=true cublas=true cublaslt=true"
  "cuda-graph=true cublas=true cublaslt=true arena-update=true"
  "cuda-graph=true cublas=true cublaslt=true cudnn-attention=true"
  "cublas=true cublaslt=true cudnn-attention=true fp32-storage=true" "cublas=false"
  "cublas=true cublaslt=true cublaslt-gelu=true"
  "cuda-graph=true cublas=true cublaslt=true cublaslt-gelu=true")
failed=0 total=0
for m in "${models[@]}"; do
  for c in "${configs[@]}"; do
    total=$((total + 1))
    if out=$("$OPT" "$m" --gacc-lower-to-nvvm-pipeline="$c" -o /dev/null 2>&1); then
      echo "ok    $(basename "$m") [$c]"
    else
      failed=$((failed + 1))
      echo "FAIL  $(basename "$m") [$c]: $(echo "$out" | grep -m2 -i error | cut -c1-300)"
    fi
  done
done
echo "cuda-compile-matrix: $((total - failed)) of $total compiled"
[ "$failed" = 0 ]
