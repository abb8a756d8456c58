#!/bin/sh
# clgrad-train's table: every line of it 120 columns between bars (rules, rows, checkpoint
# notes), an iteration with a validation is one row, singular nouns for one, and the
# validation set named when it is the test set.
# Usage: table_tidy.sh CLGRAD_TRAIN WORK
set -u
# a small network: what these check is the tool, not the network (the default one takes
# minutes under the GPU profile)
tiny=$(cd "$(dirname "$0")" && pwd)/sweep/tiny.net
train=$1
work=$2/tidy
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work"
mkdir -p "$work"
out=$("$train" --net "$tiny" --limit-train 256 --limit-test 128 --batch 32 --epochs 2 --validate-on-test \
  --validation-frequency 4 --verbose-frequency 2 --checkpoint-path "$work/ck" \
  --save "$work/m.clgm" 2>&1) || fail "exit $?: $out"
echo "$out"
echo "$out" | grep '^|' | awk 'length($0) != 120 || substr($0, 120, 1) != "|" { print "bad line: " $0; bad = 1 } END { exit bad }' ||
  fail "a table line is not 120 columns between bars"
rows=$(echo "$out" | grep -E '^\| +[0-9]+ \| +[0-9]+ \|' | awk -F'|' '{ print $3 + 0 }')
[ "$(echo "$rows" | sort -n | uniq -d)" = "" ] || fail "an iteration has two rows: $(echo "$rows" | sort -n | uniq -d)"
[ "$(echo "$rows" | tr '\n' ' ')" = "1 2 4 6 8 10 12 14 16 " ] || fail "rows at $(echo "$rows" | tr '\n' ' ')"
echo "$out" | grep -q '^| checkpoint: .*checkpoint-e0001-i00000008.clgm  *|$' || fail "checkpoint note"
echo "$out" | grep -q "128 validation (the test set)" || fail "the test set is not named as validation"
echo "$out" | grep -q "^Trained 2 epochs (16 iterations)" || fail "summary line"
out=$("$train" --net "$tiny" --split-cpu 2 --limit-train 256 --limit-test 128 --batch 32 --epochs 1 \
  --save "$work/m1.clgm" 2>&1) || fail "exit $?: $out"
echo "$out"
echo "$out" | grep -q "1 compute unit)" || fail "1 compute unit"
echo "$out" | grep -q ", 1 epoch$" || fail "1 epoch in the settings line"
echo "$out" | grep -q "^Trained 1 epoch (8 iterations)" || fail "1 epoch in the summary"
echo "$out" | grep -q '^| mini-batch split over 2 devices: .* *|$' || fail "split note"
echo "table_tidy: every check passed"
