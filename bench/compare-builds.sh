#!/usr/bin/env bash
# Compares this build of gacc with another one (another commit's build
# directory) on the CPU: whether the three original examples end 20
# optimizer steps with bit-identical parameters, and the median optimizer
# step time of each build side by side (alternating runs, gacc-run's own
# median over STEPS steps; STEPS / 40 for kjv_char). What a change that must not alter results or
# slow the step down is checked with.
#
#   git worktree add /tmp/gacc-old <rev> && (cd /tmp/gacc-old && make build)
#   bash bench/compare-builds.sh /tmp/gacc-old/build [STEPS] [RUNS]
#
# Needs Fashion-MNIST and the KJV (Debian's dataset-fashion-mnist,
# bible-kjv) and /usr/bin/python3 with numpy. Exit status 1 when the
# parameters differ.
set -euo pipefail
cd "$(dirname "$0")/.."
other=${1:?usage: bench/compare-builds.sh OTHER_BUILD_DIR [STEPS] [RUNS]}
steps=${2:-400}
runs=${3:-6}
this=build
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run() { # build example extra-args...
  local b=$1 ex=$2; shift 2
  LD_LIBRARY_PATH="$b/lib" "$b/bin/gacc-run" "examples/$ex.mlir" --no-eval \
    --log-every 100000 "$@"
}
data_args() { [ "$1" = kjv_char ] && echo --dataset kjv || true; }

echo "parameters after 20 optimizer steps, $this against $other:"
status=0
for ex in fashion_mlp fashion_mlp_adamw kjv_char; do
  for b in "$this" "$other"; do
    run "$b" "$ex" $(data_args "$ex") --max-steps 20 \
      --save-params "$work/$ex.$(basename "$(dirname "$b")")-$(basename "$b").safetensors" >/dev/null
  done
  a=$(ls "$work"/"$ex".*.safetensors | head -1)
  c=$(ls "$work"/"$ex".*.safetensors | tail -1)
  if cmp -s "$a" "$c"; then
    echo "  $ex: bit-identical"
  else
    echo "  $ex: DIFFERENT"
    status=1
  fi
done

echo "median optimizer step (ms), $runs alternating runs of $steps steps:"
printf "  %-20s %10s %10s\n" example this other
for ex in fashion_mlp fashion_mlp_adamw kjv_char; do
  # kjv_char's step is ~100 times longer: a tenth of the steps, at least 5.
  n=$steps
  [ "$ex" = kjv_char ] && n=$(( steps / 40 > 5 ? steps / 40 : 5 ))
  for r in $(seq "$runs"); do
    for b in "$this" "$other"; do
      ms=$(run "$b" "$ex" $(data_args "$ex") --max-steps "$n" | grep -o "median [0-9.]* ms" | grep -o "[0-9.]*")
      echo "$b $ms" >> "$work/$ex.times"
    done
  done
  med() { grep "^$1 " "$work/$ex.times" | awk '{print $2}' | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
  printf "  %-20s %10s %10s\n" "$ex" "$(med "$this")" "$(med "$other")"
done
exit $status
