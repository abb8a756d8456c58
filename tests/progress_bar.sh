#!/bin/sh
# On a terminal the progress bar fits its width (less a column) and clears only what it drew:
# a 60-column terminal gets the text alone, a 100-column one a bar as well; no line between
# carriage returns (the bar, the blanks that clear it) passes the edge. Skipped where script(1) cannot give a terminal.
# Usage: progress_bar.sh CLGRAD_TRAIN WORK
set -u
# a small network: what these check is the tool, not the network (the default one takes
# minutes under the GPU profile)
tiny=$(cd "$(dirname "$0")" && pwd)/sweep/tiny.net
train=$1
work=$2/bar
fail() { echo "FAIL: $*"; exit 1; }
command -v script > /dev/null || { echo "skipped: script(1) (util-linux) is not installed"; exit 77; }
rm -rf "$work"
mkdir -p "$work"
for cols in 60 100; do
  script -qec "stty cols $cols; $train --net $tiny --limit-train 512 --limit-test 64 --batch 32 --epochs 1 --save $work/m.clgm" \
    /dev/null > "$work/tty$cols.txt" 2>&1 || fail "$cols columns: exit $?"
  grep -q "ETA" "$work/tty$cols.txt" || fail "$cols columns: no progress bar"
  tr '\r' '\n' < "$work/tty$cols.txt" | grep -E 'ETA|^ +$' |
    awk -v c=$cols 'length($0) > c - 1 { print "too wide: " length($0) ": " $0; bad = 1 } END { exit bad }' ||
    fail "$cols columns: a line passes the edge"
done
grep -q '\[###' "$work/tty100.txt" || fail "100 columns: no bar"
grep -q '\[###' "$work/tty60.txt" && fail "60 columns: a bar that cannot fit"
echo "progress_bar: every check passed"
