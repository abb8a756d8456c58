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
expect 2 "^clgrad-train: --resume /nonexistent-clgrad: No such file or directory; it takes a checkpoint" "$t" --resume /nonexistent-clgrad
expect 2 "^clgrad-train: --evaluate /nonexistent-clgrad.clgm: No such file or directory; it takes a saved model" "$t" --evaluate /nonexistent-clgrad.clgm
# options that would be silently ignored together (issue 42, item 4)
expect 2 "^clgrad-train: --evaluate and --resume exclude each other" "$t" --evaluate m.clgm --resume ck
expect 2 "^clgrad-train: --sweep and --resume exclude each other" "$t" --sweep s --resume ck
expect 2 "^clgrad-train: --results is the CSV of a --sweep" "$t" --results r.csv
expect 2 "^clgrad-train: --json is --evaluate's report" "$t" --json
expect 2 "^clgrad-train: --output-network best-validation needs validation data" "$t" --output-network best-validation
expect 2 "^clgrad-train: --validation-patience needs validation data" "$t" --validation-patience 3
expect 2 "^clgrad-train: --image-size, --channels and --resize-shorter are for image folders" "$t" --image-size 28x28
expect 2 "^clgrad-predict: --npy classifies the array's images: give the model alone, not b.png too" "$bin/clgrad-predict" --npy x.npy m.clgm b.png
# one option parser for every tool (issue 42, item 10): strict numbers with their range, the
# bad argument named, one-dash long names, options after operands, "--"
p=$bin/clgrad-predict
x=$bin/clgrad-export-images
fm=/usr/share/datasets/fashion-mnist
expect 2 "^clgrad-train: unknown option -epochs: options take two dashes, --epochs" "$t" -epochs 1
expect 2 "^clgrad-train: --limit-train 5x: expected a whole number" "$t" --limit-train 5x
expect 2 "^clgrad-train: --seed 99999999999999999999: too large" "$t" --seed 99999999999999999999
expect 2 "^clgrad-train: --quiet takes no value" "$t" --quiet=1
expect 2 "^clgrad-predict: --top needs a value" "$p" m.clgm a.png --top
expect 2 "^clgrad-predict: --top -1: must be from 1 to 100000" "$p" --top -1 m.clgm a.png
expect 2 "^clgrad-predict: --top 99999999999999999999: must be from 1 to 100000" "$p" --top 99999999999999999999 m.clgm a.png
expect 2 "^clgrad-export-images: --limit abc: expected a whole number" "$x" --limit abc a b c
expect 2 "^clgrad-export-images: --limit -3: must be >= 1" "$x" --limit -3 a b c
expect 2 "^clgrad-export-images: --limit 5x: expected a whole number" "$x" --limit 5x a b c
expect 2 "^clgrad-export-images: unknown option --bogus" "$x" --bogus a b c
expect 2 "^clgrad-export-images: unexpected argument d" "$x" a b c d
expect 1 "^clgrad-export-images: .*--weird" "$x" -- --weird b c
touch "$work/a-file"
expect 1 "^clgrad-export-images: cannot create $work/a-file: Not a directory" "$x" --limit 3 "$fm/t10k-images-idx3-ubyte.gz" "$fm/t10k-labels-idx1-ubyte.gz" "$work/a-file"
expect 2 "^clgrad-bench: --runs 0: must be from 1 to 1000" "$bin/clgrad-bench" --runs 0 peak
expect 2 "^clgrad-bench: unknown command bogus" "$bin/clgrad-bench" bogus
expect 2 "^clgrad-tune: unknown option --bogus" "$bin/clgrad-tune" --bogus
expect 2 "^clgrad-tune: --runs 0: must be from 1 to 15" "$bin/clgrad-tune" --runs 0 gemm
expect 2 "^clgrad-devices: unknown option --bogus" "$bin/clgrad-devices" --bogus
expect 2 "^clgrad-devices: --split 0: must be from 1 to 256" "$bin/clgrad-devices" --split 0
for tool in clgrad-train clgrad-predict clgrad-export-images clgrad-bench clgrad-tune clgrad-devices; do
  "$bin/$tool" -h | head -1 | grep -q "^usage: $tool" || fail "$tool -h"
  "$bin/$tool" --version | grep -q "^$tool [0-9]" || fail "$tool --version"
done
echo "ok: -h and --version in every tool"
expect 1 'filter "garbage" (from the environment variable CLGRAD_DEVICES)' env CLGRAD_DEVICES=garbage "$t" --epochs 1
expect 1 'the filter "nomatch" matches no device' "$bin/clgrad-devices" --filter nomatch
expect 1 'the filter "garbage" (from the environment variable CLGRAD_DEVICES) matches no device' env CLGRAD_DEVICES=garbage "$bin/clgrad-devices"
echo "cli_errors: every check passed"
