#!/bin/sh
# A model evaluated on the same test images from another kind of source scores the same:
# classes are matched by name (IDX labels with Fashion-MNIST's names against class folders
# named Ankle_boot, Bag, ...), both ways; a folder whose class is not among the model's is
# refused, naming it and listing both sides; the same when training resumes on other data.
# Usage: evaluate_sources.sh CLGRAD_TRAIN WORK (WORK holds m.clgm from IDX data, folders.clgm
# from WORK/folders, folders/test = the first 128 test images)
set -eu
train=$1
work=$2
fm=/usr/share/datasets/fashion-mnist
acc() { sed -n 's/^Test accuracy: \([0-9.]*\)%.*/\1/p'; }
fail() { echo "FAIL: $*"; exit 1; }
idx=$("$train" --evaluate "$work/m.clgm" --data $fm --limit-test 128 --quiet | acc)
folder=$("$train" --evaluate "$work/m.clgm" --data "$work/folders" --quiet | acc)
echo "IDX-trained model: $idx% on IDX, $folder% on class folders"
[ -n "$idx" ] && [ "$idx" = "$folder" ] || fail "the accuracies differ"
idx=$("$train" --evaluate "$work/folders.clgm" --data $fm --limit-test 128 --quiet | acc)
folder=$("$train" --evaluate "$work/folders.clgm" --data "$work/folders" --quiet | acc)
echo "folder-trained model: $idx% on IDX, $folder% on class folders"
[ -n "$idx" ] && [ "$idx" = "$folder" ] || fail "the accuracies differ"
rm -rf "$work/renamed"
mkdir -p "$work/renamed"
cp -r "$work/folders/test" "$work/renamed/test"
mv "$work/renamed/test/Bag" "$work/renamed/test/Purse"
if out=$("$train" --evaluate "$work/m.clgm" --data "$work/renamed" --quiet 2>&1); then
  fail "a class the model does not have was accepted: $out"
fi
echo "$out"
echo "$out" | grep -q '"Purse" is not among the model.s' || fail "the class is not named"
echo "$out" | grep -q "the model's: T-shirt/top, Trouser," || fail "the model's classes are not listed"
# training resumed from the IDX run's checkpoint on class folders: matched, or refused
out=$("$train" --resume "$work/ck" --data "$work/folders" --bad-files skip --epochs 2 --batch 32 --quiet \
  --save "$work/resumed-folders.clgm" 2>&1) || fail "resuming on class folders: $out"
cp -r "$work/folders/train" "$work/renamed/train"
mv "$work/renamed/train/Bag" "$work/renamed/train/Purse"
if out=$("$train" --resume "$work/ck" --data "$work/renamed" --bad-files skip --epochs 2 --batch 32 --quiet \
  --save "$work/resumed-renamed.clgm" 2>&1); then
  fail "resuming on a class the model does not have was accepted"
fi
echo "$out" | grep -q 'training data: the data.s classes do not match the model.s: "Purse"' ||
  fail "the resumed run's refusal does not name the class: $out"
echo "evaluate_sources: every check passed"
