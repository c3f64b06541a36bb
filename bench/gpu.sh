#!/usr/bin/env bash
# One prepared call on a machine with an NVIDIA GPU (the `device` tool):
# checks what it needs, builds (or unpacks) gacc, runs the GPU checks and
# times the GPU path.
#
#   bash bench/gpu.sh            # from the repository root
#
# 1. Needs: nvidia-smi and libcuda.so.1 (a driver), the CUDA toolkit (ptxas,
#    libdevice), cuBLAS, and python3 with torch (CUDA) for the PyTorch
#    baseline and the tests' reference scripts. gacc itself comes either
#    from a build here (Debian's LLVM/MLIR 22, cmake, ninja, OpenBLAS,
#    OpenMPI) or, where LLVM 22 is not installed (the device machine), from
#    .device/gacc-bundle.tar.xz, made beforehand by scripts/device-bundle.sh
#    on a machine that has it and carried along. Whatever is missing is
#    named, and the steps that need it are skipped.
# 2. GPU checks: the lit tests gated by the cuda-device feature
#    (test/integration/gpu: training on the device against the CPU path and
#    float64 PyTorch, the vision and transformer models included; the whole
#    step as one CUDA graph against the eager step, bit for bit; the arena
#    kernels on the device against their CPU path) and the host-code JIT
#    test; gacc-bench-arena also checks the arena kernels before timing.
# 3. Times (medians): PyTorch first (bench/torch_step.py: each example's
#    step eager and as one hand-captured CUDA graph, peak memory, copy
#    bandwidth, fused AdamW over 100M elements); then gacc-run --target
#    cuda's optimizer step and peak device memory for every example in
#    MODELS (fashion_mlp, fashion_mlp_adamw, kjv_char, fashion_cnn,
#    kjv_gpt) as one CUDA graph (--cuda-graph; fashion_mlp,
#    fashion_mlp_adamw and kjv_char also with --cuda-gemm=cublaslt, the
#    GEMMs' bias and ReLU epilogues), eagerly (the Fashion-MNIST
#    ones for an epoch, with test accuracy), with the GEMMs through
#    cuBLASLt (--cuda-gemm=cublaslt); where each step's device time goes
#    (GACC_CUDA_PROFILE); the arena kernels over 100M-element arenas
#    against the device's measured copy bandwidth. First of all, in every
#    mode: gacc-bench-gemm, one micro-batch's GEMMs alone with the operands
#    in device, managed and arena memory (where their host time goes).
# Each step runs under a time limit (STEP_LIMIT seconds, default 240).
# Prints a short table last; record it in docs/benchmarks.md. Exit status:
# 0 when every step ran and passed, 1 when one failed, 2 when something
# needed was missing (the steps that need it are skipped).
#
# Environment: STEP_LIMIT; GPU_QUICK=1 runs only issue 15's measurements
# (see the GPU_QUICK block below; a few minutes); GPU_TESTS="train-cuda-
# vision ..." runs only those tests of test/integration/gpu and nothing
# else (with GPU_QUICK: those tests first); GPU_GPT2=1 runs only the
# GPT-2-small-shaped step (12 blocks, d_model 768, vocabulary 50304, T 1024,
# 4 × 16, bf16, random tokens) in gacc and in PyTorch eager and
# torch.compile, printing ms per optimizer step, tokens/s and peak memory; GPU_LOG_DIR (default
# /tmp) receives lit.log, the GPU tests' whole output; GACC_USE_BUNDLE=1 uses the bundle even where
# LLVM 22 is installed (to try the bundle here); GACC_BUNDLE_DIR is where it
# is unpacked (default /tmp/gacc-bundle; emptied first).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
LIMIT=${STEP_LIMIT:-240}
LOGS=${GPU_LOG_DIR:-/tmp}
mkdir -p "$LOGS"
missing=()
have() { command -v "$1" >/dev/null 2>&1; }
echo "== gpu.sh $(date -u +%Y-%m-%dT%H:%MZ) on $(. /etc/os-release 2>/dev/null; echo "${PRETTY_NAME:-unknown OS}")"
have nvidia-smi || missing+=("nvidia-smi (NVIDIA driver)")
have nvidia-smi && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -c "import ctypes; ctypes.CDLL('libcuda.so.1')" 2>/dev/null || missing+=("libcuda.so.1")
have ptxas || [ -x /usr/local/cuda/bin/ptxas ] || missing+=("ptxas (CUDA toolkit)")
gpu=1
have nvidia-smi && python3 -c "import ctypes; ctypes.CDLL('libcuda.so.1')" 2>/dev/null || gpu=0
PY=""
for p in python3 /usr/bin/python3; do
  if "$p" -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then PY=$(command -v "$p"); break; fi
done
[ -n "$PY" ] || { missing+=("python3 with torch and CUDA"); PY=$(command -v python3 || echo /usr/bin/python3); }
echo "python: $PY"

# Where cuBLAS lives: the toolkit, or the nvidia-* wheels beside torch.
cublas_dir=$({ ls -d /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib 2>/dev/null
  "$PY" -c "import site; print('\n'.join(site.getsitepackages()))" 2>/dev/null; } |
  while read -r d; do find -H "$d" -maxdepth 5 -name 'libcublas.so.1[23]*' 2>/dev/null; done |
  head -1 | xargs -r dirname)
[ -n "$cublas_dir" ] && echo "cuBLAS: $cublas_dir" || missing+=("libcublas.so.13")

mode=""
if [ -d /usr/lib/llvm-22/lib/cmake/mlir ] && have cmake && have ninja && [ -z "${GACC_USE_BUNDLE:-}" ]; then
  mode=build
elif [ -f .device/gacc-bundle.tar.xz ]; then
  mode=bundle
else
  missing+=("Debian's LLVM/MLIR 22 to build, or .device/gacc-bundle.tar.xz (run scripts/device-bundle.sh where LLVM 22 is, then carry .device)")
fi
if [ ${#missing[@]} -gt 0 ]; then printf 'gpu.sh: missing: %s\n' "${missing[@]}"; fi

# Tools as the tests see them: BIN (gacc-run, gacc-bench-arena,
# gacc-bench-gemm), TESTS (the
# lit exec root), LIT (the lit command), KJV (the data flag for kjv_char).
BIN="" TESTS="" LIT=() KJV=()
if [ "$mode" = build ]; then
  echo "== build"
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit >/dev/null \
    && ninja -C build gacc-run gacc-opt gacc-bench-arena gacc-bench-gemm gacc_runtime_c | tail -1 \
    && { BIN=build/bin; TESTS=build/test; LIT=(/usr/lib/llvm-22/bin/lit); }
elif [ "$mode" = bundle ]; then
  echo "== unpack .device/gacc-bundle.tar.xz"
  U=${GACC_BUNDLE_DIR:-/tmp/gacc-bundle}
  rm -rf "$U" && mkdir -p "$U" && tar -C "$U" -xJf .device/gacc-bundle.tar.xz
  # Wrappers give the bundled tools their libraries, and nothing else them.
  mkdir -p "$U/wrap" "$U/test/integration/gpu" "$U/test/tools"
  for t in gacc-run gacc-bench-arena gacc-bench-gemm; do
    printf '#!/bin/sh\nLD_LIBRARY_PATH=%s/lib:%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} exec %s/bin/%s "$@"\n' \
      "$U" "$cublas_dir" "$U" "$t" > "$U/wrap/$t"
  done
  for t in FileCheck not count; do
    printf '#!/bin/sh\nLD_LIBRARY_PATH=%s/llvm/lib:%s/lib exec %s/llvm/bin/%s "$@"\n' \
      "$U" "$U" "$U" "$t" > "$U/wrap/$t"
  done
  chmod +x "$U"/wrap/*
  # The tests and gacc-run's default read Fashion-MNIST from its Debian path.
  F=/usr/share/datasets/fashion-mnist
  if [ ! -f $F/train-images-idx3-ubyte.gz ]; then
    mkdir -p $F 2>/dev/null && cp "$U"/data/fashion-mnist/*.gz $F/ 2>/dev/null \
      && echo "installed Fashion-MNIST in $F" || echo "gpu.sh: cannot write $F"
  fi
  cat > "$U/test/lit.site.cfg.py" <<EOF
config.llvm_tools_dir = "$U/wrap"
config.gacc_obj_root = "$U"
config.gacc_src_root = "$ROOT"
config.gacc_tools_dir = "$U/wrap"
config.gacc_lib_dir = "$U/lib"
import lit.llvm
lit.llvm.initialize(lit_config, config)
lit_config.load_config(config, "$ROOT/test/lit.cfg.py")
EOF
  BIN=$U/wrap; TESTS=$U/test; KJV=(--data "$U/data/kjv.txt")
  LIT=("$PY" -c "import sys; sys.path.insert(0, '$U/llvm'); from lit.main import main; main()")
fi
step() { timeout --kill-after=10 "$LIMIT" "$@"; }
# The examples trained on the device, and the optimizer steps each one's
# cublaslt and graph timings run (kjv_gpt's steps take longest).
MODELS="fashion_mlp fashion_mlp_adamw kjv_char fashion_cnn kjv_gpt"
steps_of() { [ "$1" = kjv_gpt ] && echo 30 || echo 100; }
failed=0

declare -A row step_ms
# First, in every mode (a few seconds): one micro-batch's GEMMs alone with
# their operands in device, managed and arena memory (issue 15: the GEMMs'
# host time, and the first kernel after the host wrote the input).
if [ -n "$BIN" ] && [ "$gpu" = 1 ]; then
  echo "== gacc-bench-gemm (the GEMMs' host time by memory kind)"
  step "$BIN/gacc-bench-gemm" --rounds 200 || failed=1
fi
# GPU_GPT2=1: only the GPT-2-small-shaped step (scripts/make-gpt.py --preset
# gpt2-small on random tokens) against PyTorch eager and torch.compile
# (bench/torch_gpt_step.py), in this run.
if [ -n "${GPU_GPT2:-}" ]; then
  [ -n "$BIN" ] && [ "$gpu" = 1 ] || { echo "gpu.sh: GPU_GPT2 needs gacc and a GPU"; exit 2; }
  echo "== GPT-2-small shape: PyTorch eager and torch.compile (bench/torch_gpt_step.py 4 16 8)"
  step "$PY" bench/torch_gpt_step.py 4 16 8 || failed=1
  "$PY" scripts/make-gpt.py --preset gpt2-small -o "$LOGS/gpt2_small.mlir" &&
    "$PY" bench/random_tokens.py "$LOGS/gpt2_tokens.safetensors" 576 1024 50304 || { echo "gpu.sh: cannot write the GPT-2 inputs"; exit 1; }
  # cuBLASLt: bf16 operands on tensor cores, attention's batch products
  # as batched GEMMs. The eager cuBLAS step is left out: its batch products
  # are loops of the NVVM pipeline, far slower at T = 1024. The last run
  # keeps the rounded values in fp32 (--fp32-storage): the same step with
  # the storage before gacc-narrow-stored-values, for its memory and time.
  # The first run's attention is cuDNN's fused kernels (--cuda-attention=
  # cudnn), the others' the blockwise decomposition.
  for flags in "--cuda-graph --cuda-gemm=cublaslt --cuda-attention=cudnn" "--cuda-graph --cuda-gemm=cublaslt" "--cuda-gemm=cublaslt" "--cuda-graph" "--cuda-graph --cuda-gemm=cublaslt --fp32-storage"; do
    echo "== gacc-run --target cuda $flags gpt2_small (9 optimizer steps of 4 × 16 × 1024 tokens; the median of all 9, the first one capturing)"
    m=$LOGS/gpu_gpt2_small.jsonl; rm -f "$m"
    step "$BIN/gacc-run" "$LOGS/gpt2_small.mlir" --target cuda $flags --dataset tensors \
      --data "$LOGS/gpt2_tokens.safetensors" --max-steps 9 --no-eval --log-every 1 --metrics "$m"
    rc=$?; echo "exit $rc"
    [ "$rc" = 0 ] || { failed=1; continue; }
    "$PY" -c "import json,sys; d=[json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]; ms=d['median_step_ms']; print(f'gacc gpt2_small $flags: step_ms={ms:.1f} tokens_per_s={65536 / ms * 1e3:.0f} peak_gb={d.get(\"peak_device_mb\", 0) / 1e3:.2f}')" "$m"
  done
  [ "$failed" = 0 ] && echo "gpu.sh: GPU_GPT2 done" || echo "gpu.sh: a GPU_GPT2 step failed"
  exit "$failed"
fi
# GPU_QUICK=1: issue 15's figures in one short call: the GPU tests of the
# graph and of cuBLASLt against the CPU path (unless GPU_TESTS names
# others), PyTorch's eager and whole-step graph steps for fashion_mlp,
# fashion_mlp_adamw and kjv_char, gacc's --cuda-graph step for each with
# cuBLAS and with cuBLASLt (kjv_char also with cuBLASLt's GELU
# epilogues), and where fashion_mlp's eager cuBLASLt step's device time
# goes.
if [ -n "${GPU_QUICK:-}" ]; then
  [ -n "$BIN" ] && [ "$gpu" = 1 ] || { echo "gpu.sh: GPU_QUICK needs gacc and a GPU"; exit 2; }
  QUICK="fashion_mlp fashion_mlp_adamw kjv_char"
  echo "== GPU tests: ${GPU_TESTS:=cuda-graph train-cuda}"
  suites=(); for t in $GPU_TESTS; do suites+=("$TESTS/integration/gpu/$t.test"); done
  step "${LIT[@]}" -v "${suites[@]}" 2>&1 |
    tee "$LOGS/lit.log" | grep -E '^(PASS|FAIL|UNSUPPORTED|Testing Time)|^  (Passed|Failed)'
  [ "${PIPESTATUS[0]}" = 0 ] || failed=1
  echo "== PyTorch: eager and the whole step as one CUDA graph"
  step "$PY" bench/torch_step.py --steps 50 --elements 0 --models "${QUICK// /,}" || failed=1
  for model in $QUICK; do
    # kjv_char's tanh GELU also in cuBLASLt's GELU epilogues, to compare
    # (llm.c found them slower than a GELU kernel on one GPU, faster on
    # an H100).
    for gemm in cublas cublaslt cublaslt-gelu; do
      [ "$gemm" = cublaslt-gelu ] && [ "$model" != kjv_char ] && continue
      flags=(--cuda-gemm=${gemm%-gelu})
      [ "$gemm" = cublaslt-gelu ] && flags+=(--cuda-gelu-epilogue)
      m=$LOGS/gpu_${model}_graph_$gemm.jsonl; rm -f "$m"
      step "$BIN/gacc-run" examples/$model.mlir --target cuda --cuda-graph "${flags[@]}" \
        --max-steps 100 --no-eval --log-every 100 \
        $([ "$model" = kjv_char ] && echo --dataset kjv "${KJV[@]}") --metrics "$m" > /dev/null
      rc=$?
      [ "$rc" = 0 ] || failed=1
      "$PY" -c "import json,sys; d=[json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]; print(f'gacc {sys.argv[2]} --cuda-graph {sys.argv[3]}: {d[\"median_step_ms\"]:.3f} ms/step, peak device {d.get(\"peak_device_mb\", 0):.1f} MB')" "$m" $model "${flags[*]}" 2>/dev/null ||
        echo "gacc $model --cuda-graph ${flags[*]}: exit $rc"
    done
  done
  echo "== where fashion_mlp's eager cuBLASLt step's device time goes (GACC_CUDA_PROFILE=1, 20 steps)"
  GACC_CUDA_PROFILE=1 step "$BIN/gacc-run" examples/fashion_mlp.mlir --target cuda --cuda-gemm=cublaslt \
    --max-steps 20 --no-eval --log-every 100 | sed -n '/cuda profile/,$p' | head -20
  [ "$failed" = 0 ] && echo "gpu.sh: GPU_QUICK done" || echo "gpu.sh: a GPU_QUICK step failed"
  exit "$failed"
fi
if [ -n "$BIN" ]; then
  echo "== GPU tests (lit, cuda-device feature; without a GPU only the host-code JIT runs)"
  suites=("$TESTS/integration/gpu" "$TESTS/tools/cuda-host-code-jit.test")
  [ -n "${GPU_TESTS:-}" ] && { suites=(); for t in $GPU_TESTS; do suites+=("$TESTS/integration/gpu/$t.test"); done; }
  step "${LIT[@]}" -v "${suites[@]}" 2>&1 |
    tee "$LOGS/lit.log" | grep -E '^(PASS|FAIL|UNSUPPORTED|XPASS|XFAIL|Testing Time)|^  (Passed|Failed|Unsupported)'
  [ "${PIPESTATUS[0]}" = 0 ] || failed=1
  echo "(the whole lit output, failures' commands included: $LOGS/lit.log)"
fi
if [ -n "${GPU_TESTS:-}" ]; then
  [ "$failed" = 0 ] && echo "gpu.sh: GPU_TESTS passed" || echo "gpu.sh: a GPU test failed"
  exit "$failed"
fi
torch_out=""
if [ -n "$PY" ] && "$PY" -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  echo "== PyTorch baselines: eager, and the whole step as one CUDA graph"
  torch_out=$(step "$PY" bench/torch_step.py --steps 50) || failed=1
  echo "$torch_out"
fi

if [ -n "$BIN" ] && [ "$gpu" = 0 ]; then
  echo "== no GPU driver: training and kernel timings skipped"
elif [ -n "$BIN" ]; then
  summarize() {
    "$PY" -c "import json,sys; d=[json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]; print(f\"{d['median_step_ms']:.3f} ms/step, peak device {d.get('peak_device_mb', 0):.1f} MB\" + (f\", test accuracy {d['test_accuracy']:.4f}\" if 'test_accuracy' in d else ''))" "$1" 2>/dev/null
  }
  # The data flags of each example.
  data_args() {
    case $1 in
      kjv_char) echo --dataset kjv "${KJV[@]}" ;;
      kjv_gpt) echo --dataset kjv-text "${KJV[@]}" ;;
    esac
  }
  # The whole step as one CUDA graph (--cuda-graph), replayed from the
  # second optimizer step on.
  for model in $MODELS; do
    args=(--max-steps $(steps_of $model) --no-eval --log-every 100 $(data_args $model))
    echo "== gacc-run --target cuda --cuda-graph $model ${args[*]}"
    m=/tmp/gpu_${model}_graph.jsonl; rm -f "$m"
    step "$BIN/gacc-run" examples/$model.mlir --target cuda --cuda-graph "${args[@]}" --metrics "$m"
    rc=$?; echo "exit $rc"
    [ "$rc" = 0 ] && step_ms["$model graph"]=$(summarize "$m") || failed=1
  done
  # The same graph with cuBLASLt's GEMMs (a linear layer's bias add and ReLU
  # in the GEMM's epilogue), for issue 15's three models, and kjv_char's
  # also with its tanh GELU in cuBLASLt's GELU epilogues.
  for model in fashion_mlp fashion_mlp_adamw kjv_char kjv_char-gelu; do
    flags=(--cuda-gemm=cublaslt)
    [ "$model" = kjv_char-gelu ] && flags+=(--cuda-gelu-epilogue)
    example=${model%-gelu}
    args=(--max-steps $(steps_of $example) --no-eval --log-every 100 $(data_args $example))
    echo "== gacc-run --target cuda --cuda-graph ${flags[*]} $example ${args[*]}"
    m=/tmp/gpu_${model}_graph_lt.jsonl; rm -f "$m"
    step "$BIN/gacc-run" examples/$example.mlir --target cuda --cuda-graph "${flags[@]}" "${args[@]}" --metrics "$m"
    rc=$?; echo "exit $rc"
    [ "$rc" = 0 ] && step_ms["$model graph cublaslt"]=$(summarize "$m") || failed=1
  done
  for model in $MODELS; do
    # The Fashion-MNIST examples for an epoch (test accuracy), the text
    # ones for their timing's steps.
    args=(--epochs 1 --log-every 100)
    [[ "$model" = kjv_* ]] && args=($(data_args $model) --max-steps $(steps_of $model) --no-eval --log-every 10)
    echo "== gacc-run --target cuda $model ${args[*]}"
    m=/tmp/gpu_$model.jsonl; rm -f "$m"
    step "$BIN/gacc-run" examples/$model.mlir --target cuda "${args[@]}" --metrics "$m"
    rc=$?; echo "exit $rc"
    [ "$rc" = 0 ] && step_ms[$model]=$(summarize "$m")
    [ "$rc" = 0 ] || failed=1
    # A failure inside the step (1) or a crash (signal): name the kernel.
    if [ "$rc" = 1 ] || [ "$rc" -gt 128 ]; then
      echo "== again with GACC_CUDA_TRACE=1 (each launch named, then synchronized), one step"
      GACC_CUDA_TRACE=1 CUDA_MODULE_LOADING=EAGER step "$BIN/gacc-run" examples/$model.mlir \
        --target cuda "${args[@]}" --max-steps 1 2>&1 |
        grep -v '^ *[0-9][0-9]* \|^Stack dump\|^PLEASE\|^0\.' | tail -8
    fi
  done
  # The GEMMs through cuBLASLt (plans chosen once) against cublasSgemm.
  for model in fashion_mlp kjv_char fashion_cnn kjv_gpt; do
    args=(--max-steps $(steps_of $model) --no-eval --log-every 100 $(data_args $model))
    echo "== gacc-run --target cuda --cuda-gemm=cublaslt $model ${args[*]}"
    m=/tmp/gpu_${model}_lt.jsonl; rm -f "$m"
    step "$BIN/gacc-run" examples/$model.mlir --target cuda --cuda-gemm=cublaslt "${args[@]}" --metrics "$m"
    rc=$?; echo "exit $rc"
    [ "$rc" = 0 ] && step_ms["$model cublaslt"]=$(summarize "$m") || failed=1
    GACC_CUDA_PROFILE=1 step "$BIN/gacc-run" examples/$model.mlir --target cuda --cuda-gemm=cublaslt \
      --max-steps 20 "${args[@]:2}" | sed -n '/cuda profile/,$p' | head -20
  done
  for model in $MODELS; do
    args=(--max-steps 20 --no-eval --log-every 100 $(data_args $model))
    echo "== where $model's device time goes (GACC_CUDA_PROFILE=1, 20 steps)"
    GACC_CUDA_PROFILE=1 step "$BIN/gacc-run" examples/$model.mlir --target cuda \
      "${args[@]}" | sed -n '/cuda profile/,$p' | head -24
  done
  for model in fashion_mlp_adamw kjv_char; do
    echo "== gacc-bench-arena $model (check on the device, then timing)"
    out=$(step "$BIN/gacc-bench-arena" examples/$model.mlir --target cuda --elements 100000000 --repeats 50)
    rc=$?; echo "$out"; echo "exit $rc"
    [ "$rc" = 0 ] || failed=1
    row[$model]=$(echo "$out" | awk '/^(copy|accumulate|sum of|update)/')
  done
fi
echo
echo "== summary (medians; GB/s = bytes moved / time)"
have nvidia-smi && nvidia-smi --query-gpu=name --format=csv,noheader | head -1
for model in fashion_mlp_adamw kjv_char; do
  [ -n "${row[$model]:-}" ] && { echo "-- gacc arena kernels, @$model, 100M elements"; echo "${row[$model]}"; }
done
[ -n "$torch_out" ] && { echo "-- PyTorch"; echo "$torch_out" | sed 's/^torch: //'; }
for model in $MODELS; do
  n=$(steps_of $model)
  echo "-- gacc-run --target cuda @$model: ${step_ms[$model]:-not measured}"
  [ "$model" = fashion_mlp_adamw ] ||
    echo "-- gacc-run --target cuda --cuda-gemm=cublaslt @$model ($n steps): ${step_ms[$model cublaslt]:-not measured}"
  echo "-- gacc-run --target cuda --cuda-graph @$model ($n steps): ${step_ms[$model graph]:-not measured}"
  [ -n "${step_ms[$model graph cublaslt]:-}" ] &&
    echo "-- gacc-run --target cuda --cuda-graph --cuda-gemm=cublaslt @$model ($n steps): ${step_ms[$model graph cublaslt]}"
  [ -n "${step_ms[$model-gelu graph cublaslt]:-}" ] &&
    echo "-- gacc-run --target cuda --cuda-graph --cuda-gemm=cublaslt --cuda-gelu-epilogue @$model ($n steps): ${step_ms[$model-gelu graph cublaslt]}"
done
if [ ${#missing[@]} -gt 0 ]; then
  printf 'gpu.sh: incomplete, missing: %s\n' "${missing[@]}"
  exit 2
fi
[ "$failed" = 0 ] || { echo "gpu.sh: a step failed (see above)"; exit 1; }
