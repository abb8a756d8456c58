#!/bin/sh
# A first run (an empty program cache) says it is building OpenCL kernels, on lines of their
# own before the table, and leaves compiler diagnostics off the terminal; the next run with
# the same cache builds nothing and says nothing of it.
# Usage: first_run.sh CLGRAD_TRAIN WORK
set -u
# a small network: what these check is the tool, not the network (the default one takes
# minutes under the GPU profile)
tiny=$(cd "$(dirname "$0")" && pwd)/sweep/tiny.net
train=$1
work=$2/first-run
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work"
mkdir -p "$work"
for run in 1 2; do
  CLGRAD_CACHE_DIR=$work/cache "$train" --net "$tiny" --limit-train 256 --limit-test 128 --batch 32 --epochs 1 \
    --save "$work/m.clgm" > "$work/out$run.txt" 2> "$work/err$run.txt" || fail "run $run: exit $?"
  cat "$work/out$run.txt"
  [ -s "$work/err$run.txt" ] && fail "run $run wrote to stderr: $(cat "$work/err$run.txt")"
done
grep -q "^Building OpenCL kernels (first run with these kernels on this device; later runs load them from the cache): .*(.* s)$" "$work/out1.txt" ||
  fail "the first run does not say it builds kernels"
awk '/^\|====/ { table = 1 } /^Building/ && table { bad = 1 } END { exit bad }' "$work/out1.txt" ||
  fail "a Building line inside the table"
grep -q "Building" "$work/out2.txt" && fail "the second run built kernels again"
echo "first_run: every check passed"
