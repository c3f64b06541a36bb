#!/usr/bin/env bash
# One prepared call on a machine with an NVIDIA GPU (the `device` tool):
# checks what it needs, builds, runs the GPU checks and times the GPU path.
#
#   bash bench/gpu.sh            # from the repository root
#
# 1. Needs: nvidia-smi and libcuda.so.1 (a driver), Debian's LLVM/MLIR 22
#    (/usr/lib/llvm-22), cmake, ninja, OpenBLAS, OpenMPI, zlib and GoogleTest
#    headers to build; python3 with torch (CUDA) for the PyTorch baseline.
#    Whatever is missing is named, and the steps that need it are skipped.
# 2. Builds gacc-run, gacc-opt and gacc-bench-arena (build/, Release).
# 3. GPU checks: the lit tests gated by the cuda-device feature
#    (test/integration/gpu: training on the device against the CPU path, the
#    arena kernels on the device against their CPU path); gacc-bench-arena
#    also checks the arena kernels before timing them.
# 4. Times (medians): the arena kernels over 100M-element arenas against the
#    device's measured copy bandwidth; gacc-run --target cuda's optimizer
#    step and peak device memory for examples/fashion_mlp.mlir and
#    examples/fashion_mlp_adamw.mlir; PyTorch eager's step and peak memory
#    for the same models (SGD, and fused AdamW with clipping), its copy
#    bandwidth and its fused AdamW over 100M elements.
# Prints a short table last; record it in docs/benchmarks.md.
set -uo pipefail
cd "$(dirname "$0")/.."
missing=()
have() { command -v "$1" >/dev/null 2>&1; }
have nvidia-smi || missing+=("nvidia-smi (NVIDIA driver)")
ldconfig -p 2>/dev/null | grep -q libcuda.so.1 || [ -e /usr/lib/x86_64-linux-gnu/libcuda.so.1 ] || missing+=("libcuda.so.1")
[ -d /usr/lib/llvm-22/lib/cmake/mlir ] || missing+=("libmlir-22-dev (/usr/lib/llvm-22)")
have cmake || missing+=(cmake)
have ninja || missing+=(ninja-build)
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
torch_ok=0; "$PY" -c "import torch; assert torch.cuda.is_available()" 2>/dev/null && torch_ok=1
[ "$torch_ok" = 1 ] || missing+=("python3 torch with CUDA (baseline only)")
echo "== gpu.sh $(date -u +%Y-%m-%dT%H:%MZ)"
have nvidia-smi && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
if [ ${#missing[@]} -gt 0 ]; then echo "gpu.sh: missing: ${missing[*]}"; fi

built=0
if [ -d /usr/lib/llvm-22/lib/cmake/mlir ] && have cmake && have ninja; then
  echo "== build"
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit >/dev/null \
    && ninja -C build gacc-run gacc-opt gacc-bench-arena gacc-unittests gacc_runtime_c | tail -1 && built=1
fi

declare -A row step
if [ "$built" = 1 ]; then
  echo "== GPU tests (lit, cuda-device feature)"
  /usr/lib/llvm-22/bin/lit -v build/test/integration/gpu build/test/tools/cuda-host-code-jit.test 2>&1 | tail -15
  for model in fashion_mlp fashion_mlp_adamw; do
    echo "== gacc-run --target cuda $model (1 epoch)"
    rm -f /tmp/gpu_$model.jsonl
    build/bin/gacc-run examples/$model.mlir --target cuda --epochs 1 --log-every 100 --metrics /tmp/gpu_$model.jsonl
    rc=$?; echo "exit $rc"
    [ "$rc" = 0 ] && step[$model]=$(tail -1 /tmp/gpu_$model.jsonl 2>/dev/null | "$PY" -c "import json,sys; d=json.loads(sys.stdin.read()); print(f\"{d['median_step_ms']:.3f} ms/step, peak device {d.get('peak_device_mb', 0):.1f} MB, test accuracy {d.get('test_accuracy', 0):.4f}\")" 2>/dev/null)
  done
  for model in fashion_mlp_adamw kjv_char; do
    echo "== gacc-bench-arena $model (check on the device, then timing)"
    out=$(build/bin/gacc-bench-arena examples/$model.mlir --target cuda --elements 100000000 --repeats 50)
    rc=$?; echo "$out"; echo "exit $rc"
    row[$model]=$(echo "$out" | awk '/^(copy|accumulate|sum of|update)/')
  done
fi
torch_out=""
if [ "$torch_ok" = 1 ]; then
  echo "== PyTorch eager baseline"
  torch_out=$("$PY" bench/torch_step.py --steps 50); echo "$torch_out"
fi

echo
echo "== summary (medians; GB/s = bytes moved / time)"
for model in fashion_mlp_adamw kjv_char; do
  [ -n "${row[$model]:-}" ] && { echo "-- gacc arena kernels, @$model, 100M elements"; echo "${row[$model]}"; }
done
[ -n "$torch_out" ] && { echo "-- PyTorch eager"; echo "$torch_out" | sed 's/^torch: //'; }
for model in fashion_mlp fashion_mlp_adamw; do
  echo "-- gacc-run --target cuda @$model: ${step[$model]:-not measured}"
done
