#!/usr/bin/env bash
# Installs every Debian 12 package clgrad needs and builds it into ./build.
# Usage: tools/setup-debian.sh   (as root, or with sudo available)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake pkg-config git
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo
  libclblast-dev libopenblas-dev libstb-dev libturbojpeg0-dev libcmocka-dev zlib1g-dev nettle-dev libcairo2-dev
  libopenmpi-dev openmpi-bin
  libprotobuf-c-dev protobuf-c-compiler libonnx-dev libonnx-testdata
  python3-sympy
  dataset-fashion-mnist
)
as_root=()
[ "$(id -u)" -eq 0 ] || as_root=(sudo)
"${as_root[@]}" apt-get update
DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y --no-install-recommends "${packages[@]}"

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
