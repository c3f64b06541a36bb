#!/bin/bash
# The CPU step on a team of threads against one: each example's median ms
# per optimizer step with --cpu-threads 1 and --cpu-threads THREADS
# (default 2, the threads the PyTorch programs set), in ROUNDS alternating
# rounds (default 3), the median of the rounds' medians, and PyTorch 1.13
# eager on 2 threads for the examples that have a PyTorch program in
# bench/ (same model, shapes and schedule). Prints the ratios THREADS /
# one thread and THREADS / PyTorch; issues 13, 12 and 15 ask for gacc ≤
# 0.5 × PyTorch.
#
#   bench/cpu-threads.sh [BUILD_DIR]     (default: build)
set -euo pipefail
build=${1:-build}
rounds=${ROUNDS:-3}
threads=${THREADS:-2}
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# name : steps : gacc-run arguments : PyTorch program and its arguments
examples=(
  "fashion_mlp:300::"
  "fashion_cnn:20::torch_fashion_cnn.py batch 20"
  "fashion_cnn_groupnorm:20::torch_fashion_cnn.py group 20"
  "kjv_char:30:--dataset kjv:torch_kjv_char.py"
  "kjv_gpt:10:--dataset kjv-text:torch_kjv_gpt.py 10 4 128 4 128 3e-3"
)
step_ms() { sed -n 's/^summary: .*median \([0-9.]*\) ms\/step.*/\1/p'; }
torch_ms() { sed -n 's/.*median_step_ms[= ]\([0-9.]*\).*/\1/p' | tail -1; }
for ((r = 0; r < rounds; ++r)); do
  for e in "${examples[@]}"; do
    IFS=: read -r name steps args torch <<< "$e"
    # shellcheck disable=SC2086
    for t in one all; do
      flag=(--cpu-threads "$threads"); [ $t = one ] && flag=(--cpu-threads 1)
      "$build/bin/gacc-run" "$here/examples/$name.mlir" $args "${flag[@]}" \
        --max-steps "$steps" --no-eval | step_ms >> "$tmp/$name-$t"
    done
    # shellcheck disable=SC2086
    [ -n "$torch" ] && /usr/bin/python3 "$here/bench/"$torch | torch_ms >> "$tmp/$name-torch"
  done
done
printf "%-22s %10s %12s %9s %10s %9s\n" example "1 thread" "$threads threads" ratio "torch" "vs torch"
for e in "${examples[@]}"; do
  IFS=: read -r name _ _ torch <<< "$e"
  one=$(median < "$tmp/$name-one"); all=$(median < "$tmp/$name-all")
  t=-; vs=-
  if [ -n "$torch" ]; then
    t=$(median < "$tmp/$name-torch")
    vs=$(awk -v a="$all" -v b="$t" 'BEGIN { printf "%.2f", a / b }')
  fi
  printf "%-22s %10s %12s %9s %10s %9s\n" "$name" "$one" "$all" \
    "$(awk -v a="$all" -v b="$one" 'BEGIN { printf "%.2f", a / b }')" "$t" "$vs"
done
for e in "${examples[@]}"; do
  IFS=: read -r name _ _ _ <<< "$e"
  echo "rounds $name: 1 thread $(tr '\n' ' ' < "$tmp/$name-one"); all $(tr '\n' ' ' < "$tmp/$name-all")$([ -f "$tmp/$name-torch" ] && echo "; torch $(tr '\n' ' ' < "$tmp/$name-torch")")"
done
