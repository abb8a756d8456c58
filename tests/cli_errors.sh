#!/bin/sh
# Command-line mistakes get one line naming the flag the user typed, exit 2 (1 for a device
# filter that matches nothing), and no training.
# Usage: cli_errors.sh BUILD_DIR WORK
set -u
bin=$1
work=$2/cli
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work"
mkdir -p "$work/classes/Bag" "$work/classes/Coat"
# expect EXIT PATTERN COMMAND...: the exit status, and stderr's first line matching PATTERN
expect() {
  want=$1 pattern=$2
  shift 2
  err=$("$@" 2>&1 >/dev/null)
  rc=$?
  [ $rc -eq "$want" ] || fail "$*: exit $rc, want $want: $err"
  echo "$err" | head -1 | grep -q -- "$pattern" || fail "$*: message \"$err\" lacks \"$pattern\""
  [ "$(echo "$err" | wc -l)" -le 2 ] || fail "$*: more than two lines: $err"
  echo "ok: $* -> $(echo "$err" | head -1)"
}
t=$bin/clgrad-train
expect 2 "^clgrad-train: --epochs 0 must be >= 1" "$t" --epochs 0
expect 2 "^clgrad-train: --lr-drop-period 0 must be >= 1 epoch" "$t" --lr-drop-period 0
expect 2 "^clgrad-train: --momentum 2 must be in \[0, 1)" "$t" --momentum 2
expect 2 "^clgrad-train: --epochs needs a value" "$t" --epochs
expect 2 "^clgrad-train: unknown option --bogus (clgrad-train --help" "$t" --bogus
expect 2 "^clgrad-train: --solver nadam: the choices are sgdm, adam, rmsprop, adamw" "$t" --solver nadam
expect 2 "^clgrad-train: --shuffle sometimes: the choices are once, every-epoch, never" "$t" --shuffle sometimes
expect 2 "^clgrad-train: --data /nonexistent-clgrad: No such file or directory; it takes a folder of IDX files" "$t" --data /nonexistent-clgrad
expect 2 "^clgrad-train: --data $work/classes holds 2 folders (Bag, Coat) but no train/ and test/: class folders go under $work/classes/train" "$t" --data "$work/classes"
# options that would be silently ignored together (issue 42, item 4)
expect 2 "^clgrad-train: --evaluate and --resume exclude each other" "$t" --evaluate m.clgm --resume ck
expect 2 "^clgrad-train: --sweep and --resume exclude each other" "$t" --sweep s --resume ck
expect 2 "^clgrad-train: --results is the CSV of a --sweep" "$t" --results r.csv
expect 2 "^clgrad-train: --json is --evaluate's report" "$t" --json
expect 2 "^clgrad-train: --output-network best-validation needs validation data" "$t" --output-network best-validation
expect 2 "^clgrad-train: --validation-patience needs validation data" "$t" --validation-patience 3
expect 2 "^clgrad-train: --image-size and --channels are for image folders" "$t" --image-size 28x28
expect 2 "^clgrad-predict: --npy classifies the array's images: give the model alone, not b.png too" "$bin/clgrad-predict" --npy x.npy m.clgm b.png
expect 1 'filter "garbage" (from the environment variable CLGRAD_DEVICES)' env CLGRAD_DEVICES=garbage "$t" --epochs 1
expect 1 'the filter "nomatch" matches no device' "$bin/clgrad-devices" --filter nomatch
expect 1 'the filter "garbage" (from the environment variable CLGRAD_DEVICES) matches no device' env CLGRAD_DEVICES=garbage "$bin/clgrad-devices"
echo "cli_errors: every check passed"
