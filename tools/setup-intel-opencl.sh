#!/usr/bin/env bash
# Installs Intel's oneAPI OpenCL CPU runtime from PyPI into a private venv (no root needed) and
# writes an ICD file for it. Idempotent. Prints the variable to use:
#   OCL_ICD_VENDORS=DIR/intel.icd build/clgrad-devices
# Usage: tools/setup-intel-opencl.sh [DIR]   (default: ~/.local/share/clgrad/intel-opencl)
# The venv's lib/ must not go on LD_LIBRARY_PATH: it ships a libOpenCL.so of its own that would
# replace the system's ICD loader. libintelocl.so finds its neighbours through RUNPATH $ORIGIN.
set -euo pipefail
dir=${1:-${XDG_DATA_HOME:-$HOME/.local/share}/clgrad/intel-opencl}
python=${PYTHON:-python3}

if [ ! -x "$dir/venv/bin/pip" ]; then
  if ! "$python" -c 'import venv, ensurepip' 2>/dev/null; then
    echo "setup-intel-opencl.sh: $python cannot make a venv: apt-get install python3-venv" >&2
    exit 1
  fi
  mkdir -p "$dir"
  "$python" -m venv "$dir/venv" >&2
fi
lib=$(ls "$dir"/venv/lib/libintelocl.so 2>/dev/null || true)
if [ -z "$lib" ]; then
  # Debian 12's TBB is older than the runtime needs; tbb 2023 is the one it was built against.
  "$dir/venv/bin/pip" install --quiet --disable-pip-version-check \
    intel-opencl-rt intel-cmplr-lib-rt 'tbb==2023.*' >&2
  lib=$(ls "$dir"/venv/lib/libintelocl.so)
fi
echo "$(cd "$(dirname "$lib")" && pwd)/libintelocl.so" > "$dir/intel.icd.tmp"
mv "$dir/intel.icd.tmp" "$dir/intel.icd"
echo "OCL_ICD_VENDORS=$dir/intel.icd"
