#!/bin/sh
# A resumed run says which checkpoint it took up (iterations done, the epoch it goes on
# with), draws the table's header, continues the plot from the metrics log, and leaves a log
# with one row per iteration although the first run went on past that checkpoint.
# Usage: resume_continues.sh CLGRAD_TRAIN WORK
set -u
# a small network: what these check is the tool, not the network (the default one takes
# minutes under the GPU profile)
tiny=$(cd "$(dirname "$0")" && pwd)/sweep/tiny.net
train=$1
work=$2/resume
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work"
mkdir -p "$work"
quick="--net $tiny --limit-train 256 --limit-test 128 --batch 32"
"$train" $quick --epochs 2 --quiet --log "$work/m.csv" --plot "$work/p.png" \
  --checkpoint-path "$work/ck" --checkpoint-unit iteration --checkpoint-frequency 5 \
  --save "$work/m.clgm" > /dev/null || fail "first run: exit $?"
out=$("$train" $quick --epochs 3 --log "$work/m.csv" --plot "$work/p.png" \
  --resume "$work/ck/checkpoint-e0001-i00000010.clgm" --save "$work/m2.clgm" 2>&1) ||
  fail "resumed run: exit $?: $out"
echo "$out"
echo "$out" | grep -q "^Resumed from $work/ck/checkpoint-e0001-i00000010.clgm: 10 iterations done, going on with epoch 2 of 3$" ||
  fail "the resumed checkpoint is not named"
echo "$out" | grep -q "^The plot goes on from the 10 points before the checkpoint in $work/m.csv$" ||
  fail "the plot's history"
echo "$out" | grep -q "^|  Epoch  |  Iteration" || fail "no table header"
rows=$(awk -F, 'NR > 1 && $1 == "iteration" { print $3 }' "$work/m.csv" | tr '\n' ' ')
[ "$rows" = "$(seq 1 24 | tr '\n' ' ')" ] || fail "log iterations: $rows"
echo "resume_continues: every check passed"
