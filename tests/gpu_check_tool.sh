#!/usr/bin/env bash
# tools/gpu-check.sh's table from benchmark rows of this device (its --table-only mode: the
# rest of the script needs a GPU machine): every GEMM shape with the built-in and CLBlast
# GFLOP/s, their ratio and shares of the measured and a nominal peak; bad arguments exit 2.
# Usage: gpu_check_tool.sh SOURCE_DIR BUILD_DIR WORK
set -u
src=$1 build=$2 work=$3/gpu-check-tool
check=$src/tools/gpu-check.sh
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
"$build/clgrad-bench" peak --runs 1 --json > "$work/peak.json" || fail "clgrad-bench peak: exit $?"
"$build/clgrad-bench" gemm --shape sq256 --runs 1 --json > "$work/gemm.json" || fail "clgrad-bench gemm: exit $?"
"$build/clgrad-bench" conv --shape c1 --runs 1 --json > "$work/conv.json" 2>/dev/null || fail "clgrad-bench conv: exit $?"
bash "$check" --table-only "$work" --peak-tflops 1 > "$work/table.txt" 2>&1 || fail "--table-only: exit $?: $(cat "$work/table.txt")"
grep -q "^FP32 FMA loop: [0-9]* GFLOP/s (nominal 1 TFLOP/s" "$work/table.txt" || fail "no peak line: $(cat "$work/table.txt")"
if grep -q '"impl":"clblast"' "$work/gemm.json"; then
  grep -Eq "^sq256 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+% +[0-9.]+%$" "$work/table.txt" || fail "sq256 row: $(cat "$work/table.txt")"
else
  grep -Eq "^sq256 +[0-9.]+ +- +- +[0-9.]+% +[0-9.]+%$" "$work/table.txt" || fail "sq256 row: $(cat "$work/table.txt")"
fi
grep -Eq "^c1 +fwd +[a-z_]+ +[0-9.]+ ms" "$work/table.txt" || fail "no convolution rows: $(cat "$work/table.txt")"
mkdir -p "$work/empty"
bash "$check" --table-only "$work/empty" > /dev/null 2>&1; [ $? -eq 2 ] || fail "--table-only on a folder without rows: not exit 2"
bash "$check" --frobnicate > "$work/bad.txt" 2>&1; [ $? -eq 2 ] && grep -q "unknown option" "$work/bad.txt" || fail "unknown option"
bash "$check" --out > /dev/null 2>&1; [ $? -eq 2 ] || fail "--out without a value: not exit 2"
echo "gpu_check_tool: every check passed"
