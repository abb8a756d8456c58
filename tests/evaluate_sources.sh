#!/bin/sh
# A model evaluated on the same test images from another kind of source scores the same:
# classes are matched by name (IDX labels with Fashion-MNIST's names against class folders
# named Ankle_boot, Bag, ...), both ways; a folder whose class is not among the model's is
# refused, naming it and listing both sides.
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
echo "evaluate_sources: every check passed"
