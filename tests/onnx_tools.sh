#!/bin/sh
# The tools with ONNX models: clgrad-train --export-onnx writes one, --evaluate and
# clgrad-predict read it and give what the clgrad model file gives, and --net FILE.onnx
# trains on from its weights.
# Usage: onnx_tools.sh BUILD_DIR WORK
set -u
# a small network: what these check is the tool, not the network (the default one takes
# minutes under the GPU profile)
tiny=$(cd "$(dirname "$0")" && pwd)/sweep/tiny.net
bin=$1
work=$2/onnx-tools
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work"
mkdir -p "$work"
quick="--net $tiny --limit-train 256 --limit-test 128 --batch 32 --quiet"
"$bin/clgrad-train" $quick --epochs 1 --save "$work/m.clgm" --export-onnx "$work/m.onnx" \
  > "$work/train.txt" || fail "training and export: exit $?"
grep -q "^ONNX model written to $work/m.onnx$" "$work/train.txt" || fail "no export line"
a=$("$bin/clgrad-train" --evaluate "$work/m.clgm" --limit-test 128 --quiet | head -1)
b=$("$bin/clgrad-train" --evaluate "$work/m.onnx" --limit-test 128 --quiet | head -1)
echo "clgm: $a"
echo "onnx: $b"
[ -n "$a" ] && [ "$a" = "$b" ] || fail "the ONNX model evaluates differently"
"$bin/clgrad-export-images" --limit 4 --fashion-names /usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz \
  /usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz "$work/img" > /dev/null || fail "export images"
"$bin/clgrad-predict" --json "$work/m.clgm" "$work/img" > "$work/p1.json" || fail "predict clgm"
"$bin/clgrad-predict" --json "$work/m.onnx" "$work/img" > "$work/p2.json" || fail "predict onnx"
cmp -s "$work/p1.json" "$work/p2.json" || fail "predictions differ: $(diff "$work/p1.json" "$work/p2.json" | head -4)"
out=$("$bin/clgrad-train" --limit-train 256 --limit-test 128 --batch 32 --quiet --epochs 1 \
  --net "$work/m.onnx" --save "$work/tuned.clgm" 2>&1) ||
  fail "fine-tuning the ONNX model: $out"
echo "$out" | tail -1
# transfer learning: the 10-class model on 3 classes, the layers before its output frozen
fm=/usr/share/datasets/fashion-mnist
for part in train:train t10k:test; do
  "$bin/clgrad-export-images" --limit 300 --fashion-names "$fm/${part%%:*}-images-idx3-ubyte.gz" \
    "$fm/${part%%:*}-labels-idx1-ubyte.gz" "$work/three/${part##*:}" > /dev/null || fail "export"
  (cd "$work/three/${part##*:}" && ls | grep -vxE 'Bag|Coat|Dress' | xargs rm -rf)
done
out=$("$bin/clgrad-train" --net "$work/m.onnx" --data "$work/three" --base-lr-factor 0 \
  --epochs 2 --batch 16 --save "$work/three.clgm" 2>&1) || fail "transfer learning: $out"
echo "$out" | grep -q "^Transfer learning: $work/m.onnx has 10 classes, the data 3: its last fully connected layer starts afresh with 3 outputs$" ||
  fail "no transfer-learning line: $out"
echo "$out" | tail -1
echo "onnx_tools: every check passed"
