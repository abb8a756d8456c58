#!/bin/sh
# --summary describes the network the other options name (issue 42, item 3): a saved model
# (--evaluate, or --net MODEL.clgm), its ONNX export (--net MODEL.onnx) and the newest
# checkpoint of a folder (--resume), not the default network.
# Usage: summary_models.sh BUILD_DIR WORK
set -u
bin=$1/clgrad-train
work=$2/summary-models
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work"
mkdir -p "$work"
printf 'input 28x28x1\nconv 3x3x8 pad=1\nrelu\nmaxpool 2x2\nfc 10\nsoftmax\n' > "$work/tiny.net"
"$bin" --quiet --net "$work/tiny.net" --limit-train 128 --limit-test 64 --batch 64 --epochs 1 \
  --checkpoint-path "$work/ck" --save "$work/tiny.clgm" --export-onnx "$work/tiny.onnx" \
  > "$work/train.out" 2>&1 || fail "training: $(cat "$work/train.out")"
want="5 layers, 15,770 learnable parameters"
for how in "--evaluate $work/tiny.clgm" "--net $work/tiny.clgm" "--net $work/tiny.onnx" \
           "--resume $work/ck" "--resume $work/ck --net $work/tiny.net"; do
  "$bin" --summary $how > "$work/s.out" 2>&1 || fail "--summary $how: $(cat "$work/s.out")"
  grep -q "$want" "$work/s.out" || fail "--summary $how: $(tail -3 "$work/s.out")"
done
mkdir "$work/empty"
"$bin" --summary --resume "$work/empty" > "$work/s.out" 2>&1 && fail "--resume without checkpoints"
grep -q "no checkpoint-\*.clgm there" "$work/s.out" || fail "$(cat "$work/s.out")"
echo "summary_models: every check passed"
