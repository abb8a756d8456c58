#!/usr/bin/env bash
# The one run for the day a GPU is at hand: builds clgrad against the machine's OpenCL ICD,
# runs the test suite on the GPU, tunes the GEMM there, benchmarks GEMM (CLBlast as the peer
# on the same GPU), the convolutions and training, and prints one table of GFLOP/s with each
# figure's share of the GPU's FP32 peak. Meant to finish within 8 minutes on a large GPU.
#
# usage: tools/gpu-check.sh [--debs DIR] [--build DIR] [--out DIR] [--peak-tflops X]
#                           [--filter F] [--no-tests]
#   --debs DIR        unpack the .deb files in DIR into / first (a machine without package
#                     access: ../shared/gpu/fetch-debs.sh gathers them) and register NVIDIA's
#                     OpenCL driver with the ICD loader when no vendor file names it
#   --build DIR       build folder (default /tmp/clgrad-gpu-build)
#   --out DIR         logs, JSON rows and the tuning cache (default $OUT, else /tmp/clgrad-gpu-check)
#   --peak-tflops X   the GPU's nominal FP32 peak (e.g. 67 for an H200 SXM); the table then
#                     shows shares of it beside those of the measured FMA loop
#   --filter F        device filter (default gpu: the fastest GPU)
#   --no-tests        skip the suite (benchmarks only)
#   --allow-cpu       run on whatever the filter picks, a CPU too (to try the script; a CPU's
#                     figures are not the GPU's)
#   --table-only DIR  print the table from the JSON rows an earlier run left in DIR
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
debs="" build=/tmp/clgrad-gpu-build out=${OUT:-/tmp/clgrad-gpu-check} nominal="" filter=gpu tests=1
allow_cpu=0 table_only=""
while [ $# -gt 0 ]; do
  case $1 in
    --debs) debs=${2:-}; shift ;;
    --build) build=${2:-}; shift ;;
    --out) out=${2:-}; shift ;;
    --peak-tflops) nominal=${2:-}; shift ;;
    --filter) filter=${2:-}; shift ;;
    --no-tests) tests=0 ;;
    --allow-cpu) allow_cpu=1 ;;
    --table-only) table_only=${2:-}; shift ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "gpu-check: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  [ $# -gt 0 ] || { echo "gpu-check: a value is missing (see --help)" >&2; exit 2; }
  shift
done
# The table from the JSON rows in folder $1.
table() {
  cat "$1"/peak.json "$1"/gemm.json "$1"/conv.json "$1"/train.json 2>/dev/null |
    awk -v nominal="$nominal" '
    function val(key,   m) {  # a value of this flat JSON row: number, true/false, or string
      if (match($0, "\"" key "\":(\"[^\"]*\"|[^,}]*)")) {
        m = substr($0, RSTART + length(key) + 3, RLENGTH - length(key) - 3)
        gsub(/"/, "", m); return m
      }
      return ""
    }
    function share(x,   s) {
      s = (peak > 0) ? sprintf("%5.1f%%", 100 * x / peak) : "    -"
      if (nominal > 0) s = s sprintf("  %5.1f%%", 100 * x / (1000 * nominal))
      return s
    }
    /"bench":"peak"/ { peak = val("gflops"); device = val("device") }
    /"bench":"gemm"/ { key = val("shape"); g[key, val("impl")] = val("gflops"); if (!(key in seen)) { seen[key] = 1; order[++n] = key } }
    /"bench":"conv"/ { name = val("algo") ((val("chosen") == "true") ? " *" : ""); c[++nc] = sprintf("%-5s %-12s %-16s %9.3f ms %9.1f", val("layer"), val("pass"), name, val("ms"), val("gflops")); cg[nc] = val("gflops") }
    /"bench":"train"/ { ips = val("images_per_s"); tg = val("gflops"); mf = val("mflop_per_image") }
    END {
      # (ternaries in parentheses: a bare > among printf arguments is a redirection)
      note = (nominal > 0) ? sprintf(" (nominal %s TFLOP/s: second share column)", nominal) : ""
      printf "device: %s\nFP32 FMA loop: %.0f GFLOP/s%s\n\n", device, peak, note
      printf "%-8s %12s %12s %7s  %s\n", "GEMM", "built-in", "CLBlast", "ratio", "built-in share of peak"
      for (i = 1; i <= n; i++) {
        b = g[order[i], "builtin"]; p = g[order[i], "clblast"]
        ptext = (p == "") ? "-" : sprintf("%.1f", p)
        ratio = (p > 0) ? sprintf("%.2f", b / p) : "-"
        printf "%-8s %12.1f %12s %7s  %s\n", order[i], b, ptext, ratio, share(b)
      }
      printf "\n%-5s %-12s %-16s %12s %9s  %s\n", "conv", "pass", "algorithm (*: auto)", "time", "GFLOP/s", "share of peak"
      for (i = 1; i <= nc; i++) printf "%s  %s\n", c[i], share(cg[i])
      if (ips != "")
        printf "\ntraining, default network, batch 256: %.0f images/s, %.1f MFLOP/image, %.1f GFLOP/s  %s\n",
               ips, mf, tg, share(tg)
    }'
}

if [ -n "$table_only" ]; then
  [ -s "$table_only/gemm.json" ] || { echo "gpu-check: no gemm.json in $table_only" >&2; exit 2; }
  table "$table_only"
  exit 0
fi
mkdir -p "$out" || exit 2
start=$(date +%s)
step() { echo "== $1 [$(( $(date +%s) - start )) s]"; }
# The whole run within 8 minutes: each step gets at most its own cap and what is left of the
# budget after the reserve of the steps after it (seconds).
budget=470
cap() { # cap, reserve: a step's timeout
  local left=$(( budget - ($(date +%s) - start) - $2 ))
  [ "$left" -lt "$1" ] && echo $(( left > 20 ? left : 20 )) || echo "$1"
}
failed=0

if [ -n "$debs" ]; then
  step "unpacking $(ls "$debs"/*.deb 2>/dev/null | wc -l) packages from $debs"
  for f in "$debs"/*.deb; do dpkg -x "$f" / || failed=1; done
  ldconfig
fi
if ! grep -qs nvidia /etc/OpenCL/vendors/*.icd; then
  lib=$(find / -xdev \( -name 'libnvidia-opencl.so.1' -o -name 'libnvidia-opencl.so.[0-9]*' \) 2>/dev/null | head -1)
  if [ -n "$lib" ]; then
    mkdir -p /etc/OpenCL/vendors && echo "$lib" > /etc/OpenCL/vendors/nvidia.icd
    echo "registered NVIDIA's OpenCL driver: $lib"
  fi
fi

step "building in $build"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release > "$out/cmake.log" 2>&1 &&
  cmake --build "$build" -j"$(nproc)" > "$out/build.log" 2>&1 ||
  { tail -n 30 "$out/cmake.log" "$out/build.log"; echo "gpu-check: the build failed"; exit 1; }

export CLGRAD_DEVICES=$filter CLGRAD_CACHE_DIR=$out/cache POCL_CACHE_DIR=$out/pocl-cache
step "devices"
"$build/clgrad-devices" | tee "$out/devices.txt"
"$build/clgrad-devices" --filter "$filter" --json > "$out/device.json" 2>/dev/null
if [ "$allow_cpu" -eq 0 ] && ! grep -q '"type":"gpu"' "$out/device.json"; then
  echo "gpu-check: no GPU matches filter \"$filter\" (see $out/devices.txt)"; exit 1
fi

if [ "$tests" -eq 1 ]; then
  t=$(cap 240 200)
  step "test suite on the GPU (ctest, 4 at a time, $t s at most)"
  (cd "$build" && timeout "$t" ctest -j4 --output-on-failure) > "$out/ctest.log" 2>&1 || failed=1
  grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|\*\*\*" "$out/ctest.log" | tail -n 15
fi

t=$(cap 90 130)
step "GEMM tuning on the GPU (clgrad-tune gemm --quick, $t s at most)"
timeout "$t" "$build/clgrad-tune" gemm --quick > "$out/tune.txt" 2>&1 || failed=1
grep -E "^(before|after|best|stored)|GFLOP/s" "$out/tune.txt" | tail -n 12

step "benchmarks"
bench() { # name, reserve, then clgrad-bench arguments; JSON rows into $out/name.json
  local name=$1 t; t=$(cap 60 "$2"); shift 2
  timeout "$t" "$build/clgrad-bench" "$@" --json > "$out/$name.json" 2> "$out/$name.err" ||
    { failed=1; echo "clgrad-bench $* failed: $(tail -n 3 "$out/$name.err")"; }
}
bench peak 100 peak --runs 5
bench gemm 80 gemm --runs 5
bench conv 40 conv --runs 5
bench train 0 train --runs 3 --batch 256

step "table"
table "$out" | tee "$out/table.txt"

step "done: logs and JSON rows in $out"
exit "$failed"
