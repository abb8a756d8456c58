#!/bin/sh
# A folder data set of 1,000 classes (ImageNet's count) trains with a network of 1,000
# outputs, and the saved model names every class: clgrad-predict prints the folders' names.
# Usage: many_classes.sh BUILD_DIR WORK
set -u
bin=$1
work=$2/many-classes
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work"
mkdir -p "$work"
# one 8x8 gray PGM an image, a value pattern per class; class k is the folder "k0042"-style
python3 - "$work" <<'PY' || fail "could not write the images"
import os, sys
root = sys.argv[1]
for split in ("train", "test"):
    for k in range(1000):
        d = os.path.join(root, "data", split, "k%04d" % k)
        os.makedirs(d)
        pixels = bytes((k * 7 + i * 13 + (split == "test")) % 256 for i in range(64))
        with open(os.path.join(d, "a.pgm"), "wb") as f:
            f.write(b"P5 8 8 255\n" + pixels)
PY
printf 'input 8x8x1\nfc 1000\nsoftmax\n' > "$work/net.txt"
"$bin/clgrad-train" --quiet --net "$work/net.txt" --data "$work/data" --epochs 1 --batch 100 \
  --save "$work/m.clgm" > "$work/train.txt" 2>&1 || fail "training: $(tail -5 "$work/train.txt")"
"$bin/clgrad-predict" --top 3 "$work/m.clgm" "$work/data/test/k0999/a.pgm" > "$work/out.txt" 2>&1 ||
  fail "predict: $(cat "$work/out.txt")"
cat "$work/out.txt"
[ "$(grep -c 'k[0-9][0-9][0-9][0-9]' "$work/out.txt")" -ge 3 ] || fail "the classes are not named"
grep -q '?' "$work/out.txt" && fail "a class without its name"
echo "many_classes: every check passed"
