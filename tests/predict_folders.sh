#!/bin/sh
# clgrad-predict on folders: every image under a labelled tree (class folders named as the
# model's classes) classified, with the accuracy clgrad-train --evaluate gives for the same
# images; an unreadable image reported on its own line while the others go on (exit 1); a
# tree whose folders are not classes unlabelled.
# Usage: predict_folders.sh BUILD_DIR WORK (WORK holds m.clgm and folders/test: the first 128
# test images)
set -u
bin=$1
work=$2
fail() { echo "FAIL: $*"; exit 1; }
p=$work/predict
rm -rf "$p"
mkdir -p "$p"
"$bin/clgrad-predict" --top 1 "$work/m.clgm" "$work/folders/test" > "$p/out.txt" 2> "$p/err.txt" ||
  fail "exit $?: $(cat "$p/err.txt")"
tail -1 "$p/out.txt"
[ "$(grep -c '^  .*%  ' "$p/out.txt")" -eq 128 ] || fail "not 128 results"
want=$("$bin/clgrad-train" --evaluate "$work/m.clgm" --limit-test 128 --quiet | sed -n 's/^Test accuracy: \([0-9.]*\)%.*/\1/p')
grep -q "^Accuracy: $want% (.* of 128 labelled images)" "$p/out.txt" || fail "accuracy is not $want%"
cp -r "$work/folders/test" "$p/tree"
printf 'not an image' > "$p/tree/Bag/000_broken.png"
"$bin/clgrad-predict" --top 1 "$work/m.clgm" "$p/tree" > "$p/out2.txt" 2> "$p/err2.txt"
rc=$?
cat "$p/err2.txt"
[ $rc -eq 1 ] || fail "exit $rc with an unreadable image, want 1"
grep -q "^clgrad-predict: $p/tree/Bag/000_broken.png: image .*000_broken.png: not a PNG" "$p/err2.txt" ||
  fail "the image is not named"
grep -q "CLG_ERR_\|clg_[a-z_]*: " "$p/err2.txt" && fail "the library's internal names in a message"
grep -q "1 of 129 images could not be read" "$p/err2.txt" || fail "no count of failures"
[ "$(grep -c '^  .*%  ' "$p/out2.txt")" -eq 128 ] || fail "the other images were not all classified"
mkdir -p "$p/plain/a" "$p/plain/b"
cp "$work/folders/test/Bag/"*.png "$p/plain/a/"
"$bin/clgrad-predict" "$work/m.clgm" "$p/plain" > "$p/out3.txt" || fail "unlabelled tree"
grep -q "^Accuracy" "$p/out3.txt" && fail "accuracy without labels"
# an image whose header declares a size past the limits is said to be too large, not "not an
# image" (a PNG of 100000 x 100000 pixels: its IHDR chunk and no more)
python3 -c "
import struct, sys, zlib
def chunk(t, d): return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))
sys.stdout.buffer.write(b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 100000, 100000, 8, 0, 0, 0, 0)) + chunk(b'IEND', b''))
" > "$p/huge.png"
"$bin/clgrad-predict" "$work/m.clgm" "$p/huge.png" > /dev/null 2> "$p/err4.txt" && fail "a huge image was read"
grep -q "huge.png: 100000x100000 pixels, too large: clgrad reads images of at most" "$p/err4.txt" ||
  fail "the huge image is not called too large: $(cat "$p/err4.txt")"
# NaN images (--npy) have no class: refused, not "-nan%"
python3 -c "
import struct, sys
head = \"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 28, 28), }\"
head += ' ' * (117 - len(head)) + '\\n'
sys.stdout.buffer.write(b'\\x93NUMPY\\x01\\x00' + struct.pack('<H', len(head)) + head.encode() + struct.pack('<1568f', *([float('nan')] * 1568)))
" > "$p/nan.npy"
"$bin/clgrad-predict" --npy "$p/nan.npy" "$work/m.clgm" > "$p/out5.txt" 2> "$p/err5.txt" && fail "NaN images classified: $(cat "$p/out5.txt")"
grep -q "nan.npy holds 1568 NaN or infinite values: refused" "$p/err5.txt" || fail "NaN images: $(cat "$p/err5.txt")"
# a layer's outputs for the images of an array (--npy with --activations); NaN images refused
python3 -c "
import struct, sys
head = \"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 28, 28), }\"
head += ' ' * (117 - len(head)) + '\\n'
sys.stdout.buffer.write(b'\\x93NUMPY\\x01\\x00' + struct.pack('<H', len(head)) + head.encode() + struct.pack('<1568f', *[((i * 37) % 256) / 255 for i in range(1568)]))
" > "$p/two.npy"
"$bin/clgrad-predict" --activations l2 --out "$p/a.raw" --npy "$p/two.npy" "$work/m.clgm" \
  > "$p/out6.txt" 2>&1 || fail "--npy --activations: $(cat "$p/out6.txt")"
grep -q "a.raw: 2 x " "$p/out6.txt" || fail "--npy --activations: $(cat "$p/out6.txt")"
"$bin/clgrad-predict" --activations l2 --out "$p/b.raw" --npy "$p/nan.npy" "$work/m.clgm" \
  > /dev/null 2>&1 && fail "--activations of NaN images"
# --resize-shorter: each image's shorter side to 28 (its own size here), its centre 28x28: the
# same results as the plain read; 20 is less than the model's input, refused
"$bin/clgrad-predict" --top 1 --resize-shorter 28 "$work/m.clgm" "$work/folders/test" \
  > "$p/out7.txt" 2>&1 || fail "--resize-shorter 28: $(tail -2 "$p/out7.txt")"
cmp -s "$p/out.txt" "$p/out7.txt" || fail "--resize-shorter 28 differs from the plain read"
"$bin/clgrad-predict" --resize-shorter 20 "$work/m.clgm" "$work/folders/test" > "$p/out8.txt" 2>&1
[ $? -eq 2 ] || fail "--resize-shorter 20 was not refused"
grep -q "is less than the model's input 28x28" "$p/out8.txt" || fail "$(cat "$p/out8.txt")"
echo "predict_folders: every check passed"
