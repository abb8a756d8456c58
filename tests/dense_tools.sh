#!/bin/sh
# The image-to-image tools end to end, small: clgrad-make-segmentation's scenes (the same
# seed, the same files), a U-Net and a denoiser trained by clgrad-train on them and on
# Fashion-MNIST with --denoise (tables, reports, model files), --evaluate's JSON, and
# clgrad-predict's label maps, overlays and denoised images at the images' own size; the
# mistakes a user makes refused with what to do.
# Usage: dense_tools.sh BUILD_DIR SOURCE_DIR WORK
set -u
bin=$1
src=$2
work=$3/dense
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work"
mkdir -p "$work"
fm=/usr/share/datasets/fashion-mnist
"$bin/clgrad-make-segmentation" --train 64 --test 16 --size 40 --items 2 "$fm" "$work/seg" > "$work/make.txt" ||
  fail "make-segmentation exit $?"
"$bin/clgrad-make-segmentation" --train 64 --test 16 --size 40 --items 2 "$fm" "$work/seg2" > /dev/null
cmp -s "$work/seg/train/labels/000063.png" "$work/seg2/train/labels/000063.png" ||
  fail "the same seed made other scenes"
grep -q "^Ankle_boot 10$" "$work/seg/classes.txt" || fail "no class list"
# a U-Net for 40x40 scenes: the tools/nets one at another input size
sed 's/^input 64x64x1/input 40x40x1/' "$src/tools/nets/unet.net" > "$work/unet40.net"
"$bin/clgrad-train" --data "$work/seg" --net "$work/unet40.net" --epochs 1 --batch 16 \
  --class-weights inverse --save "$work/unet.clgm" --verbose-frequency 2 > "$work/seg.txt" 2>&1 ||
  fail "segmentation training exit $?: $(tail -3 "$work/seg.txt")"
grep -q "Pixel Acc" "$work/seg.txt" || fail "the table has no pixel accuracy"
grep -q "^Class weights: background" "$work/seg.txt" || fail "no class weights said"
grep -q "^Global accuracy [0-9.]*%, mean accuracy [0-9.]*%, mean IoU 0\.[0-9]*, weighted IoU" "$work/seg.txt" ||
  fail "no segmentation metrics"
grep -q "^background  *[0-9]* *[0-9.]*% *0\.[0-9]*$" "$work/seg.txt" || fail "no per-class table"
"$bin/clgrad-train" --data "$work/seg" --evaluate "$work/unet.clgm" --json > "$work/seg.json" ||
  fail "--evaluate exit $?"
python3 -c "
import json, sys
r = json.load(open('$work/seg.json'))
assert r['task'] == 'segmentation' and r['images'] == 16, r
assert len(r['classes']) == 11 and len(r['confusion']) == 121, r
assert abs(sum(r['confusion']) - 16 * 40 * 40) == 0, 'a count per pixel'
" || fail "bad --evaluate JSON"
# whole images of another size through the fully convolutional net
python3 -c "
import struct, zlib
w, h = 48, 56
rows = b''.join(b'\0' + bytes((x * 5 + y * 3) % 256 for x in range(w)) for y in range(h))
def chunk(t, d): return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))
open('$work/big.png', 'wb').write(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 0, 0, 0, 0))
  + chunk(b'IDAT', zlib.compress(rows)) + chunk(b'IEND', b''))
"
"$bin/clgrad-predict" --out-dir "$work/pred" --overlay "$work/unet.clgm" "$work/seg/test/images/000003.png" \
  "$work/big.png" > "$work/pred.txt" || fail "predict exit $?"
grep -q "big.png: 56x48" "$work/pred.txt" || fail "the image was not run at its own size"
python3 -c "
import struct
for f, want in (('000003.png', (40, 40, 0)), ('big.png', (48, 56, 0)), ('big-overlay.png', (48, 56, 2))):
    d = open('$work/pred/' + f, 'rb').read()
    w, h, depth, colour = struct.unpack('>IIBB', d[16:26])
    assert (w, h, colour) == want, (f, w, h, colour)
" || fail "bad label map or overlay PNGs"
"$bin/clgrad-predict" "$work/unet.clgm" "$work/big.png" > /dev/null 2> "$work/err.txt" &&
  fail "no --out-dir accepted"
grep -q "give --out-dir DIR" "$work/err.txt" || fail "no word on --out-dir"
# a denoiser on Fashion-MNIST: RMSE in the table, PSNR and SSIM in the report
printf 'input 28x28x1\nconv 3x3x8 pad=1\nrelu\nconv 3x3x8 pad=1\nbatchnorm\nrelu\nconv 3x3x1 pad=1\nregression\n' > "$work/dn.net"
"$bin/clgrad-train" --denoise 0.1 --net "$work/dn.net" --epochs 1 --limit-train 256 --limit-test 64 \
  --batch 32 --save "$work/dn.clgm" --verbose-frequency 4 > "$work/dn.txt" 2>&1 ||
  fail "denoiser training exit $?: $(tail -3 "$work/dn.txt")"
grep -q "|     RMSE     |" "$work/dn.txt" || fail "the table has no RMSE"
grep -q "^Denoised PSNR [0-9.]* dB, SSIM 0\.[0-9]*; the noisy inputs: \(19\.9\|20\.0\)[0-9]* dB" "$work/dn.txt" ||
  fail "no PSNR against the noisy images' (20 dB at noise 0.1)"
"$bin/clgrad-predict" --residual --out-dir "$work/den" "$work/dn.clgm" "$work/big.png" > /dev/null ||
  fail "denoising predict exit $?"
[ -s "$work/den/big.png" ] || fail "no denoised image"
# mistakes: the default net on denoising data, a classifier on label maps, patches bigger
# than the images, --patch without --denoise
"$bin/clgrad-train" --denoise 0.1 --limit-train 64 --quiet > /dev/null 2> "$work/e1.txt" && fail "default net denoising"
grep -q "needs --net: tools/nets/dncnn.net" "$work/e1.txt" || fail "no advice: $(cat "$work/e1.txt")"
"$bin/clgrad-train" --data "$work/seg" --net "$src/tools/nets/fashion-tutorial.net" --quiet > /dev/null 2> "$work/e2.txt" &&
  fail "a classifier on label maps"
grep -q "classifies images, so it trains on class labels.*labelled by pixel" "$work/e2.txt" ||
  fail "no word on the task: $(cat "$work/e2.txt")"
"$bin/clgrad-train" --denoise 0.1 --patch 40x40 --net "$work/dn.net" --limit-train 64 --quiet > /dev/null 2> "$work/e3.txt" &&
  fail "patches larger than the images"
grep -q "patches of 40x40 do not fit the images' 28x28" "$work/e3.txt" || fail "no word on the patch: $(cat "$work/e3.txt")"
"$bin/clgrad-train" --patch 20x20 > /dev/null 2> "$work/e4.txt" && fail "--patch alone"
grep -q "give --denoise S" "$work/e4.txt" || fail "no word on --patch"
echo "dense_tools: every check passed"
