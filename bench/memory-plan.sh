#!/bin/bash
# Planned against measured peak memory of every example on the CPU (or
# --target cuda with TARGET=cuda): gacc-run --memory-plan for a few
# optimizer steps without evaluation, one row per example, with the median
# step time. RECOMPUTE=cheap (or none) passes --recompute.
#
#   bench/memory-plan.sh [BUILD_DIR]     (default: build)
set -euo pipefail
build=${1:-build}
target=${TARGET:-cpu}
recompute=${RECOMPUTE:-marked}
here=$(cd "$(dirname "$0")/.." && pwd)
echo "target $target, --recompute $recompute"
printf "%-24s %-10s %12s %12s %8s %10s\n" example "m x N" "planned MiB" "measured MiB" diff "ms/step"
for model in "$here"/examples/*.mlir; do
  name=$(basename "$model" .mlir)
  extra=()
  case $name in
    kjv_gpt) extra=(--dataset kjv-text) ;;
    kjv_gpt_lora)
      # Frozen weights to load: kjv_gpt's initial ones.
      base=$(mktemp --suffix .safetensors)
      "$build/bin/gacc-run" "$here/examples/kjv_gpt.mlir" --dataset kjv-text \
        --max-steps 0 --save-params "$base" > /dev/null
      extra=(--dataset kjv-text --load-params "$base") ;;
    kjv*) extra=(--dataset kjv) ;;
  esac
  out=$("$build/bin/gacc-run" "$model" "${extra[@]}" --target "$target" \
        --memory-plan --max-steps "${STEPS:-20}" --no-eval --recompute "$recompute")
  mn=$(sed -n 's/^memory plan of .*micro-batch \([0-9]*\) × \([0-9]*\) .*/\1 x \2/p' <<<"$out")
  line=$(grep '^memory: planned peak' <<<"$out")
  planned=$(sed 's/.*planned peak \([0-9.]*\) MiB.*/\1/' <<<"$line")
  measured=$(sed 's/.*measured \([0-9.]*\) MiB.*/\1/' <<<"$line")
  diff=$(sed 's/.*, \([-+][0-9.]*%\)$/\1/' <<<"$line")
  ms=$(sed -n 's/^summary: .*median \([0-9.]*\) ms\/step.*/\1/p' <<<"$out")
  printf "%-24s %-10s %12s %12s %8s %10s\n" "$name" "$mn" "$planned" "$measured" "$diff" "$ms"
done
