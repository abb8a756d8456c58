#!/bin/sh
# clgrad-tune runs each candidate in a child process: one that crashes it (here the 4-row
# blocks of the table's generic row, made to abort) is reported as rejected, and the search
# goes on to a result; --set scores one set; bad arguments (and a bad --from set) exit 2.
# Usage: tune_tool.sh CLGRAD_TUNE WORK
set -u
tune=$1
work=$2/tune-tool
fail() { echo "FAIL: $*"; exit 1; }
if [ "${CLGRAD_GPU_PROFILE:-}" = 1 ] || [ -n "${CLG_TEST_NO_TIMING:-}" ]; then
  echo "skipped: the tuner's scores are timings (the GPU profile's local-memory GEMM on a CPU, or instrumented code)"
  exit 77
fi
case "$("$(dirname "$tune")/clgrad-devices" --json 2>/dev/null)" in
  *"Portable Computing Language"*) ;;
  *) echo "skipped: the child processes are the tool's, the same on every platform: POCL's run checks them"; exit 77 ;;
esac
rm -rf "$work" && mkdir -p "$work"
CLGRAD_TUNE_TEST_CRASH_MR=4 CLGRAD_CACHE_DIR=$work/cache "$tune" gemm --quick --runs 1 \
  > "$work/out.txt" 2>&1 || fail "exit $?: $(tail -5 "$work/out.txt")"
cat "$work/out.txt"
grep -q "^  reg 4x16 .*REJECTED: the candidate crashed its process (signal 6)" "$work/out.txt" ||
  fail "the crashing candidate is not reported"
[ "$(grep -c "GFLOP/s$" "$work/out.txt")" -ge 3 ] || fail "the search stopped after the crash"
grep -q "^gemm after:  reg " "$work/out.txt" || fail "no result"
grep -q "^saved in $work/cache" "$work/out.txt" || fail "not stored"
ls "$work"/cache/gemm-*.tune > /dev/null || fail "no tuning file"
CLGRAD_CACHE_DIR=$work/cache "$tune" gemm --set mr=5,nr=48 --runs 1 --dry-run > "$work/set.txt" 2>&1 ||
  fail "--set: exit $?: $(cat "$work/set.txt")"
grep -q "^  reg 5x48 .* GFLOP/s$" "$work/set.txt" || fail "--set: $(cat "$work/set.txt")"
"$tune" gemm --set nr=24 --dry-run > "$work/bad.txt" 2>&1
[ $? -eq 1 ] && grep -q "nr must be 16, 32, 48 or 64" "$work/bad.txt" || fail "--set nr=24: $(cat "$work/bad.txt")"
"$tune" gemm --from nr=24 > "$work/from.txt" 2>&1
[ $? -eq 2 ] && grep -q "^clgrad-tune: --from: .*nr must be 16, 32, 48 or 64" "$work/from.txt" ||
  fail "--from nr=24: $(cat "$work/from.txt")"
"$tune" fast > /dev/null 2>&1
[ $? -eq 2 ] || fail "an unknown target does not exit 2"
echo "tune_tool: every check passed"
