#!/bin/sh
# Never losing work, never saving NaN (issue 42): Ctrl-C finishes the step, saves the network,
# writes the log and a checkpoint, and the run resumes from it; a checkpoint folder that goes
# bad mid-run is reported and training still ends with its model saved; the newest three
# checkpoints are kept across resumed runs, and a damaged newest one is passed over on resume;
# a diverging run stops with its reason and saves nothing.
# Usage: lost_work.sh BUILD_DIR WORK
set -u
bin=$1/clgrad-train
work=$2/lost-work
# a small network: what these check is the tool, not the network (the default one takes
# minutes under the GPU profile)
tiny=$(cd "$(dirname "$0")" && pwd)/sweep/tiny.net
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1
base="--net $tiny --limit-train 6400 --limit-test 128 --batch 64 --quiet"
# Waits (at most 300 s) for a file matching the pattern, while process $1 runs.
wait_for() {
  i=0
  while [ $i -lt 3000 ]; do
    ls $2 > /dev/null 2>&1 && return 0
    kill -0 "$1" 2> /dev/null || return 1
    sleep 0.1
    i=$((i + 1))
  done
  return 1
}

# 1. Ctrl-C after the first checkpoint (a script's background job ignores SIGINT unless told)
env --default-signal=INT "$bin" $base --epochs 20 --checkpoint-path ck --checkpoint-unit iteration \
  --checkpoint-frequency 10 --log m.csv --save int.clgm > int.out 2> int.err &
pid=$!
wait_for $pid 'ck/checkpoint-*.clgm' || fail "no checkpoint: $(cat int.err)"
kill -INT $pid
wait $pid
rc=$?
[ $rc -eq 130 ] || fail "Ctrl-C: exit $rc, want 130: $(cat int.err)"
grep -q "interrupted: stopping after this iteration" int.err || fail "Ctrl-C: not said"
grep -q "stopped by Ctrl-C" int.out || fail "Ctrl-C: no summary: $(cat int.out)"
grep -q "Resume with: clgrad-train --resume ck" int.out || fail "Ctrl-C: no resume hint"
[ -s int.clgm ] || fail "Ctrl-C: the network was not saved"
rows=$(grep -c '^iteration,' m.csv)
[ "$rows" -ge 10 ] || fail "Ctrl-C: the metrics log has $rows iteration rows"
last=$(ls ck | tail -1)
stopped=$(sed -n 's/.*-i0*\([0-9]*\)\.clgm/\1/p' << EOF2
$last
EOF2
)
[ "$stopped" -eq "$rows" ] || fail "Ctrl-C: the newest checkpoint ($last) is not at the last iteration logged ($rows)"
"$bin" --limit-train 6400 --limit-test 128 --batch 64 --epochs 1 --resume ck --plot res.png \
  --save resumed.clgm > res.out 2>&1 ||
  fail "resuming after Ctrl-C: $(cat res.out)"
# the plot is titled by the network (the checkpoint's, here), not the checkpoint folder
grep -q "^Plot title: Training progress: 5-layer network of 15770 parameters resumed from checkpoint-" res.out ||
  fail "the resumed plot's title: $(grep -i title res.out)"
echo "Ctrl-C at iteration $stopped: saved, logged, checkpointed, resumed"

# 2. The checkpoint folder becomes a file mid-run: warned, training goes on, the model saved.
# The folder is swapped while the run stands still (SIGSTOP) with checkpoints left to write;
# a run that ended before it could be stopped (a busy machine) is tried again, longer.
for epochs in 10 40 160; do
  rm -rf ck2 full.clgm
  "$bin" $base --epochs $epochs --checkpoint-path ck2 --checkpoint-unit iteration \
    --checkpoint-frequency 5 --save full.clgm > full.out 2> full.err &
  pid=$!
  wait_for $pid 'ck2/checkpoint-*.clgm' || fail "no checkpoint: $(cat full.err)"
  kill -STOP $pid 2> /dev/null || { wait $pid; continue; }
  case $(ps -o stat= -p $pid) in Z*|"") kill -CONT $pid 2> /dev/null; wait $pid; continue ;; esac
  rm -rf ck2 && touch ck2
  kill -CONT $pid
  wait $pid
  rc=$?
  break
done
[ $rc -eq 1 ] || fail "checkpoint failures: exit $rc, want 1"
grep -q "warning: iteration [0-9]*: checkpoint not written, training goes on: ck2/checkpoint" full.err ||
  fail "checkpoint failure not warned: $(cat full.err)"
grep -q "could not be written (see the warnings above); the trained network was saved" full.err ||
  fail "no closing word on the checkpoints: $(cat full.err)"
grep -q "^Trained $epochs epochs ($((epochs * 100)) iterations)" full.out ||
  fail "training stopped: $(cat full.out)"
[ -s full.clgm ] || fail "the network was not saved"
echo "checkpoint folder lost mid-run: warned, trained on, saved"

# 3. Retention across a resume, and a damaged newest checkpoint passed over
small="--limit-train 640 --limit-test 64 --batch 64 --quiet --checkpoint-path ck3 --checkpoint-unit iteration --checkpoint-frequency 2"
first="--net $tiny"
"$bin" $first $small --epochs 1 --save a.clgm > /dev/null 2>&1 || fail "first run"
# at an epoch's end a checkpoint is named after the epoch done, as with --checkpoint-unit epoch
[ -e ck3/checkpoint-e0001-i00000010.clgm ] || fail "the epoch's last checkpoint: $(ls ck3)"
"$bin" $small --epochs 2 --resume ck3 --save b.clgm > /dev/null 2>&1 || fail "resumed run"
n=$(ls ck3 | wc -l)
[ "$n" -eq 3 ] || fail "$n checkpoints kept across the resume, want 3: $(ls ck3)"
newest=$(ls ck3 | tail -1)
head -c 1000 "ck3/$newest" > cut && mv cut "ck3/$newest"
"$bin" $small --epochs 3 --resume ck3 --save c.clgm > c.out 2> c.err || fail "resume past a damaged checkpoint: $(cat c.err)"
grep -q "passed over checkpoints that do not load: ck3/$newest" c.err || fail "the damaged checkpoint was not named: $(cat c.err)"
grep -q "Trained 3 epochs (30 iterations, 12 after resuming)" c.out || fail "did not resume from the one before: $(cat c.out)"
echo "3 checkpoints kept across resumes; damaged newest passed over"

# 4. Divergence: stopped with its reason, nothing saved
rm -f nan.clgm
"$bin" --net "$tiny" --limit-train 512 --limit-test 64 --batch 64 --quiet --epochs 1 --learn-rate 1e30 \
  --save nan.clgm > nan.out 2> nan.err
rc=$?
[ $rc -eq 1 ] || fail "divergence: exit $rc, want 1"
grep -q "training diverged: the loss is \(NaN\|infinite\) at iteration" nan.err || fail "divergence: $(cat nan.err)"
grep -q "no model saved to nan.clgm" nan.err || fail "divergence: saving not ruled out"
grep -q "CLG_ERR_\|clg_train: " nan.err && fail "divergence: the library's internal names: $(cat nan.err)"
[ -e nan.clgm ] && fail "divergence: a model was saved"
echo "divergence: stopped and said so, nothing saved"
echo "lost_work: every check passed"
