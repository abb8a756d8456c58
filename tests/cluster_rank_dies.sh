#!/bin/sh
# A rank of a clgrad-train job dies (fault injection): the job must end non-zero, naming it.
# Usage: cluster_rank_dies.sh LOG MPIRUN-AND-ARGS...
log=$1
shift
"$@" > "$log" 2>&1
rc=$?
cat "$log"
[ "$rc" -ne 0 ] || { echo "the job ended with 0 after a rank died"; exit 1; }
grep -q 'rank 1: injected exit at step 6' "$log" || { echo "no message naming the rank"; exit 1; }
