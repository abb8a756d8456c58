#!/bin/sh
# Runs a test with two OpenCL platforms: the system's ICD files (POCL) and Intel's CPU runtime
# (tools/setup-intel-opencl.sh; CLGRAD_INTEL_ICD names its ICD file). Exits 77 (skipped) with
# the reason when Intel's runtime is not installed.
# Usage: mixed_vendors.sh WORKDIR TEST [ARGS...]
set -eu
work=$1
shift
icd=${CLGRAD_INTEL_ICD:-${XDG_DATA_HOME:-$HOME/.local/share}/clgrad/intel-opencl/intel.icd}
if [ ! -f "$icd" ]; then
  echo "skipped: Intel's OpenCL runtime is not installed ($icd;" \
    "tools/setup-intel-opencl.sh installs it)"
  exit 77
fi
rm -rf "$work"
mkdir -p "$work"
cp /etc/OpenCL/vendors/*.icd "$work"/
cp "$icd" "$work/zz-intel.icd"
OCL_ICD_VENDORS=$work exec "$@"
