#!/usr/bin/env bash
# Installs the Debian packages gacc needs that are missing (as root, with
# apt-get). Idempotent and quick when everything is present; installs nothing
# from anywhere else.
set -euo pipefail

packages=(
  cmake ninja-build g++ make zlib1g-dev
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  libopenblas-dev openmpi-bin libopenmpi-dev libomp5-14 libgtest-dev
  dataset-fashion-mnist bible-kjv
  python3-torch python3-numpy
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} Debian packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
    echo "setup: error: missing packages (${missing[*]}) and not root; run 'make setup' as root" >&2
    exit 1
  fi
else
  SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
if [ ! -x /usr/local/cuda/bin/ptxas ] && ! command -v ptxas >/dev/null 2>&1; then
  echo "setup: note: no CUDA toolkit (ptxas) found: PTX output works, cubin tests are reported UNSUPPORTED"
fi
