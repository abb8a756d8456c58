#!/bin/sh
# Probable mistakes are said and the run goes on (a mini-batch larger than the training set, a
# validation split that leaves little to train on, more --worker-load weights than devices);
# a network that does not fit the data is refused before any table, with the input line that
# would fit.
# Usage: run_warnings.sh CLGRAD_TRAIN WORK
set -u
# a small network: what these check is the tool, not the network (the default one takes
# minutes under the GPU profile)
tiny=$(cd "$(dirname "$0")" && pwd)/sweep/tiny.net
train=$1
work=$2/warnings
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work"
mkdir -p "$work"
quick="--limit-train 256 --limit-test 64 --epochs 1 --quiet --save $work/m.clgm"
# expect_warning PATTERN ARGS...: exit 0, PATTERN on stderr, training done
expect_warning() {
  pattern=$1
  shift
  err=$("$train" $quick --net "$tiny" "$@" 2>&1 >"$work/out.txt") || fail "$*: exit $?: $err"
  echo "$err" | grep -q -- "$pattern" || fail "$*: no warning \"$pattern\" in: $err"
  grep -q "^Trained 1 epoch" "$work/out.txt" || fail "$*: did not train"
  echo "ok: $* -> $err"
}
expect_warning "warning: --batch 300 is more than the 256 training images: each epoch is one mini-batch of 256" --batch 300
expect_warning "warning: --validation-split 0.9 leaves 26 of 256 images to train on" --batch 16 --validation-split 0.9
expect_warning "warning: --worker-load has 3 weights for 2 devices: the last 1 is left out" --split-cpu 2 --worker-load 3,1,1 --batch 32
printf 'input 32x32x3\nconv 3x3x8 pad=1\nrelu\nfc 10\nsoftmax\n' > "$work/n32.net"
out=$("$train" $quick --net "$work/n32.net" 2>&1)
rc=$?
[ $rc -eq 2 ] || fail "a net for 32x32x3 on 28x28x1 data: exit $rc, want 2: $out"
echo "$out" | grep -q "n32.net takes 32x32x3 images (HxWxC), the data in .* has 28x28x1: make its input line \"input 28x28x1\"" ||
  fail "no suggested input line: $out"
echo "$out" | grep -q "Epoch" && fail "a table was drawn: $out"
printf 'input 28x28x1\nconv 3x3x8 pad=1\nrelu\nfc 4\nsoftmax\n' > "$work/n4.net"
out=$("$train" $quick --net "$work/n4.net" 2>&1)
[ $? -eq 2 ] || fail "4 outputs for 10 classes: not refused: $out"
echo "$out" | grep -q "the data has 10 classes, .*n4.net's output 4: make its last fc layer \"fc 10\"" ||
  fail "no suggested fc line: $out"
echo "run_warnings: every check passed"
