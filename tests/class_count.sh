#!/bin/sh
# A folder data set of other than 10 classes with the default network (issue 42, item 1): the
# output is sized to the data's classes and keeps their names, so predictions name them; test
# data with a class the training data lacks is refused before any training.
# Usage: class_count.sh BUILD_DIR WORK (WORK holds folders/: Fashion-MNIST slices as PNGs)
set -u
bin=$1
work=$2/class-count
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work"
mkdir -p "$work/two/train" "$work/two/test" "$work/other/train" "$work/other/test"
src=$2/folders
for c in Bag Coat; do # (the fixture puts an empty file among the Bags: --bad-files skip)
  cp -r "$src/train/$c" "$work/two/train/"
  cp -r "$src/test/$c" "$work/two/test/"
  cp -r "$src/train/$c" "$work/other/train/"
done
cp -r "$src/test/Bag" "$src/test/Dress" "$work/other/test/"
"$bin/clgrad-train" --data "$work/two" --epochs 1 --batch 16 --bad-files skip --save "$work/two.clgm" \
  > "$work/two.out" 2>&1 || fail "two classes: $(cat "$work/two.out")"
grep -q "The default network's output: 2 classes, the data's" "$work/two.out" || fail "not sized: $(cat "$work/two.out")"
grep -q "^Test accuracy: [0-9.]*%" "$work/two.out" || fail "no accuracy: $(cat "$work/two.out")"
img=$(ls "$work/two/test/Coat" | head -1)
"$bin/clgrad-predict" --top 2 "$work/two.clgm" "$work/two/test/Coat/$img" > "$work/p.out" 2>&1 ||
  fail "predict: $(cat "$work/p.out")"
cat "$work/p.out"
grep -q "Bag" "$work/p.out" && grep -q "Coat" "$work/p.out" || fail "the classes are not named"
grep -q "class [2-9]" "$work/p.out" && fail "a class the data does not have"
rm -f "$work/other.clgm"
"$bin/clgrad-train" --data "$work/other" --epochs 1 --batch 16 --save "$work/other.clgm" \
  > "$work/other.out" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "a test class the model lacks: exit $rc, want 2: $(cat "$work/other.out")"
grep -q "the test data has class \"Dress\".*which the training data, and so the network, lacks" \
  "$work/other.out" || fail "not said: $(cat "$work/other.out")"
grep -q "iteration" "$work/other.out" && fail "trained before refusing"
[ -e "$work/other.clgm" ] && fail "a model was saved"
echo "class_count: every check passed"
