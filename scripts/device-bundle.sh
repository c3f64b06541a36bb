#!/usr/bin/env bash
# Builds what bench/gpu.sh needs on a machine without Debian's LLVM 22 (the
# device machine has CUDA, PyTorch and python3, but no LLVM, MLIR, OpenBLAS,
# OpenMPI or data sets): .device/gacc-bundle.tar.xz, to travel with the
# working tree (`carry: [".device"]`).
#
#   bash scripts/device-bundle.sh [BUILD_DIR]     # default build-device
#
# The bundle holds
#   bin/   gacc-run, gacc-bench-arena, gacc-bench-gemm: MLIR and LLVM linked
#          statically
#          (CMake option GACC_STATIC_LLVM), stripped;
#   lib/   libgacc_runtime_c.so and every library it loads that is not the
#          C/C++ runtime (OpenBLAS, OpenMPI, ...);
#   llvm/  lit, FileCheck, not and count, to run the GPU lit tests (FileCheck's
#          libz3 dependency is never called: an empty stub stands in);
#   data/  Fashion-MNIST's four files and the KJV text (`bible -f
#          Gen1:1-Rev22:21`), so the examples train there.
# One xz stream with a dictionary large enough for both binaries, which
# share most of their code: about 60 MB (the data sets are a third).
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build-device}
LLVM=/usr/lib/llvm-22
if [ ! -f "$B/build.ninja" ]; then
  cmake -G Ninja -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DGACC_STATIC_LLVM=ON \
    -DMLIR_DIR=$LLVM/lib/cmake/mlir -DLLVM_EXTERNAL_LIT=$LLVM/bin/lit >/dev/null
fi
echo "device-bundle: building gacc-run, gacc-bench-arena and gacc-bench-gemm (static LLVM) in $B"
ninja -C "$B" gacc-run gacc-bench-arena gacc-bench-gemm gacc_runtime_c | tail -1

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,lib,llvm/bin,llvm/lib,data/fashion-mnist}
strip -o "$stage/bin/gacc-run" "$B/bin/gacc-run"
strip -o "$stage/bin/gacc-bench-arena" "$B/bin/gacc-bench-arena"
strip -o "$stage/bin/gacc-bench-gemm" "$B/bin/gacc-bench-gemm"
cp "$B/lib/libgacc_runtime_c.so" "$stage/lib/"

# The libraries the tools load, less the C/C++ runtime every Linux has.
system='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s)\.'
for f in "$B/bin/gacc-run" "$B/bin/gacc-bench-gemm" "$B/lib/libgacc_runtime_c.so"; do
  ldd "$f" | awk '$3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r name path; do
  [[ "$name" =~ $system ]] || cp -L "$path" "$stage/lib/$name"
done

# libomp is opened at run time (the CPU step's threads): ldd does not list it.
cp -L /usr/lib/x86_64-linux-gnu/libomp.so.5 "$stage/lib/"

cp -L $LLVM/bin/FileCheck $LLVM/bin/not $LLVM/bin/count "$stage/llvm/bin/"
echo 'void gacc_z3_stub(void) {}' |
  cc -shared -fPIC -x c - -Wl,-soname,libz3.so.4 -o "$stage/llvm/lib/libz3.so.4"
cp -r $LLVM/utils/lit/lit "$stage/llvm/"
find "$stage/llvm/lit" -name __pycache__ -prune -exec rm -rf {} +

cp /usr/share/datasets/fashion-mnist/*.gz "$stage/data/fashion-mnist/"
bible -f Gen1:1-Rev22:21 > "$stage/data/kjv.txt"

mkdir -p .device
echo "device-bundle: compressing (xz, a few minutes)"
tar -C "$stage" -cf - . |
  xz -T1 --lzma2=preset=9,dict=192MiB > .device/gacc-bundle.tar.xz.part
mv .device/gacc-bundle.tar.xz.part .device/gacc-bundle.tar.xz
echo "device-bundle: wrote .device/gacc-bundle.tar.xz" \
  "($(du -m .device/gacc-bundle.tar.xz | cut -f1) MB)"
