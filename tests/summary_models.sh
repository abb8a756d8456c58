#!/bin/sh
# --summary describes the network the other options name (issue 42, item 3): a saved model
# (--evaluate, or --net MODEL.clgm), its ONNX export (--net MODEL.onnx) and the newest
# checkpoint of a folder (--resume), not the default network; and with each, the input
# normalisation --normalize computed from the training images.
# Usage: summary_models.sh BUILD_DIR WORK
set -u
bin=$1/clgrad-train
work=$2/summary-models
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work"
mkdir -p "$work"
printf 'input 28x28x1\nconv 3x3x8 pad=1\nrelu\nmaxpool 2x2\nfc 10\nsoftmax\n' > "$work/tiny.net"
"$bin" --quiet --net "$work/tiny.net" --limit-train 128 --limit-test 64 --batch 64 --epochs 1 \
  --normalize zscore --checkpoint-path "$work/ck" --save "$work/tiny.clgm" --export-onnx "$work/tiny.onnx" \
  > "$work/train.out" 2>&1 || fail "training: $(cat "$work/train.out")"
want="5 layers, 15,770 learnable parameters"
for how in "--evaluate $work/tiny.clgm" "--net $work/tiny.clgm" "--net $work/tiny.onnx" \
           "--resume $work/ck"; do
  "$bin" --summary $how > "$work/s.out" 2>&1 || fail "--summary $how: $(cat "$work/s.out")"
  grep -q "$want" "$work/s.out" || fail "--summary $how: $(tail -3 "$work/s.out")"
  # --normalize's statistics of the training images travel with the model (a Sub and a Div
  # in ONNX): Fashion-MNIST's mean near 0.29, std near 0.35
  grep -q "^input normalised: mean 0\.2[0-9]*, std 0\.3" "$work/s.out" ||
    fail "--summary $how: no normalisation: $(tail -2 "$work/s.out")"
done
"$bin" --quiet --normalize zscore --resume "$work/ck" > "$work/n.out" 2>&1
[ $? -eq 2 ] || fail "--normalize with --resume: $(cat "$work/n.out")"
mkdir "$work/empty"
"$bin" --summary --resume "$work/empty" > "$work/s.out" 2>&1 && fail "--resume without checkpoints"
grep -q "no checkpoint-\*.clgm there" "$work/s.out" || fail "$(cat "$work/s.out")"
# the other options that name a model: --evaluate converts it to ONNX with --export-onnx, and
# --resume takes --net only when it is the checkpoint's own network
"$bin" --quiet --evaluate "$work/tiny.clgm" --limit-test 64 --export-onnx "$work/again.onnx" \
  > "$work/e.out" 2>&1 || fail "--evaluate --export-onnx: $(cat "$work/e.out")"
[ -s "$work/again.onnx" ] || fail "--evaluate --export-onnx wrote nothing"
"$bin" --summary --net "$work/again.onnx" | grep -q "$want" || fail "the converted model differs"
printf 'input 28x28x1\nconv 3x3x4 pad=1\nrelu\nmaxpool 2x2\nfc 10\nsoftmax\n' > "$work/other.net"
"$bin" --quiet --resume "$work/ck" --net "$work/other.net" --epochs 2 > "$work/r.out" 2>&1
[ $? -eq 2 ] || fail "--resume with another --net: $(cat "$work/r.out")"
grep -q "is not the network of the checkpoint" "$work/r.out" || fail "$(cat "$work/r.out")"
"$bin" --quiet --resume "$work/ck" --net "$work/tiny.net" --limit-train 128 --limit-test 64 \
  --batch 64 --epochs 2 --save "$work/r.clgm" > "$work/r.out" 2>&1 ||
  fail "--resume with its own --net: $(cat "$work/r.out")"
echo "summary_models: every check passed"
