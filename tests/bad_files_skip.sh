#!/bin/sh
# --bad-files skip with undecodable files side by side in a class folder: each counted once
# and named after the epoch that found them, none again in later epochs.
# Usage: bad_files_skip.sh CLGRAD_TRAIN WORK (WORK/folders: train/ and test/ class folders,
# train/Bag/zz_empty.png an empty file)
set -u
# a small network: what these check is the tool, not the network (the default one takes
# minutes under the GPU profile)
tiny=$(cd "$(dirname "$0")" && pwd)/sweep/tiny.net
train=$1
work=$2
fail() { echo "FAIL: $*"; exit 1; }
b=$work/bad-files
rm -rf "$b"
mkdir -p "$b"
cp -r "$work/folders" "$b/data"
for i in 1 2 3 4 5; do printf 'not an image' > "$b/data/train/Bag/zz_bad$i.png"; done
out=$("$train" --net "$tiny" --data "$b/data" --epochs 2 --batch 32 --bad-files skip --dispatch-workers 2 \
  --save "$b/m.clgm" 2>&1) || fail "exit $?: $out"
echo "$out"
echo "$out" | grep -q "^| epoch 1: 6 undecodable files found and skipped (6 in all: zz_bad1.png, zz_bad2.png, zz_bad3.png and 3 more) *|$" ||
  fail "epoch 1 does not count and name the 6 files once"
echo "$out" | grep -q "^| epoch 2:" && fail "files counted again in epoch 2"
# the first image of the folder corrupt: the images' size comes from the first readable one
first=$(ls "$b/data/train" | head -1)
printf 'not an image' > "$b/data/train/$first/000_first_is_bad.png"
out=$("$train" --net "$tiny" --data "$b/data" --epochs 1 --batch 32 --bad-files skip --quiet \
  --save "$b/m2.clgm" 2>&1) || fail "a corrupt first image with --bad-files skip: exit $?: $out"
echo "bad_files_skip: every check passed"
