#!/bin/sh
# clgrad-train tries every output before training (exit 2 at once, naming the flag), says a
# plot failure once, and when the final save fails after training it writes the model beside
# the checkpoints instead, says where, and exits 1.
# Usage: outputs_checked.sh CLGRAD_TRAIN WORK
set -u
# a small network: what these check is the tool, not the network (the default one takes
# minutes under the GPU profile)
tiny=$(cd "$(dirname "$0")" && pwd)/sweep/tiny.net
train=$1
work=$2/outputs
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work"
mkdir -p "$work"
touch "$work/x.png"
quick="--net $tiny --limit-train 256 --limit-test 128 --batch 32 --epochs 1"
for flag in --save --plot --log --checkpoint-path; do
  out=$("$train" $quick $flag "$work/x.png/out" 2>&1)
  rc=$?
  [ $rc -eq 2 ] || fail "$flag under a file: exit $rc, want 2: $out"
  echo "$out" | grep -q "^clgrad-train: $flag $work/x.png/out cannot be written: $work/x.png is not a folder" ||
    fail "$flag: no message naming it: $out"
  echo "$out" | grep -q "Epoch" && fail "$flag: training started: $out"
done
echo "each output refused before training"
# the save and plot folders turn into files while training runs: the model goes beside the
# checkpoints, the plot's failure is said once
mkdir -p "$work/gone" "$work/plots"
"$train" --net "$tiny" --limit-train 256 --limit-test 128 --batch 32 --epochs 100 --quiet --log "$work/run.csv" \
  --checkpoint-path "$work/ck" --checkpoint-frequency 100 --save "$work/gone/m.clgm" \
  --plot "$work/plots/p.png" \
  > "$work/out.txt" 2>&1 &
pid=$!
i=0
while [ ! -s "$work/run.csv" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
rm -rf "$work/gone" "$work/plots" && touch "$work/gone" "$work/plots"
wait $pid
rc=$?
cat "$work/out.txt"
grep -q "^Trained 100 epochs" "$work/out.txt" || fail "training did not finish before the save"
[ $rc -eq 1 ] || fail "exit $rc after a failed save, want 1"
grep -q "the model was saved to $work/ck/m.clgm instead" "$work/out.txt" || fail "no fallback message"
[ "$(grep -c -- "--plot $work/plots/p.png" "$work/out.txt")" -eq 2 ] ||
  fail "the plot's failure is not said once (and once more at the end)"
"$train" --evaluate "$work/ck/m.clgm" --limit-test 128 --quiet | grep -q "^Test accuracy" ||
  fail "the fallback model does not load"
echo "outputs_checked: every check passed"
