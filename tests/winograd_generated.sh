#!/bin/sh
# Fails when cl_kernels/winograd_h.cl is not what tools/dev/winograd_transforms.py writes now
# (someone edited one without the other). Exits 77 (skipped) without python3's sympy.
# Usage: winograd_generated.sh SOURCE_DIR
set -eu
src=$1
if ! python3 -c 'import sympy' 2>/dev/null; then
  echo "skipped: python3 with sympy is needed to regenerate the Winograd transforms" \
    "(Debian: python3-sympy)"
  exit 77
fi
python3 "$src/tools/dev/winograd_transforms.py" > winograd_h.regenerated.cl
if ! diff -u "$src/cl_kernels/winograd_h.cl" winograd_h.regenerated.cl; then
  echo "cl_kernels/winograd_h.cl is stale: run" \
    "python3 tools/dev/winograd_transforms.py > cl_kernels/winograd_h.cl"
  exit 1
fi
echo "cl_kernels/winograd_h.cl matches its generator"
