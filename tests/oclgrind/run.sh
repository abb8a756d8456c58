#!/usr/bin/env bash
# Runs the op, network and training tests under oclgrind, a simulated OpenCL GPU: clgrad takes
# its GPU paths there (the GEMM's local-memory tiles, im2col, overlapped read-back, early
# update, no zero-copy), and oclgrind reports data races, out-of-bounds accesses, barrier
# divergence and API misuse. Any such report, or a failing test, fails the run.
# Usage: tests/oclgrind/run.sh BUILD_DIR   (Debian package oclgrind)
# Shapes are small (CLG_TEST_SMALL: oclgrind interprets every work-item); local memory is
# 64 KiB, as on current GPUs (oclgrind's default, 32 KiB, is less than the GEMM's 64x64 tiles
# need); timing checks are skipped (a simulator's times mean nothing), and so are the graph,
# mobile, segmenter and denoiser versions of the multi-device agreement (the chain's runs the
# same GPU paths; their kernels run under test_nn and test_dense).
set -uo pipefail
build=$(cd "${1:?usage: run.sh BUILD_DIR}" && pwd)
logs=$build/oclgrind
rm -rf "$logs" && mkdir -p "$logs"
export CLG_TEST_SMALL=250000 CLG_TEST_NO_TIMING=1 CLGRAD_CACHE_DIR=$build/test-cache-oclgrind
export CLGRAD_DEVICES= CLGRAD_GPU_PROFILE= CLG_TEST_SKIP='*agree_on_one_two_and_three_devices'
# oclgrind interprets on one thread, so the tests run in two lanes at once, balanced by their
# times alone on a 2-core Xeon VM (seconds, in brackets): test_parallel (580), test_conv (450)
# and the small ones (35), against test_nn (600), test_dense (360), test_gemm (80) and
# test_train (70).
lanes=("test_parallel test_conv test_tensor test_pool test_loss_norm test_activation test_dropout_optim"
       "test_nn test_dense test_gemm test_train")
run_one() {
  t=$1
  start=$(date +%s)
  oclgrind --data-races --check-api --local-mem-size 65536 --log "$logs/$t.errors" \
    "$build/tests/$t" > "$logs/$t.out" 2>&1
  echo "$? $(( $(date +%s) - start ))" > "$logs/$t.status"
}
for lane in "${lanes[@]}"; do
  (for t in $lane; do run_one "$t"; done) &
done
wait
failed=0 reports=0 count=0
for lane in "${lanes[@]}"; do
  for t in $lane; do
    count=$((count + 1))
    read -r rc took < "$logs/$t.status" || { rc=1; took=0; }
    n=$(grep -c . "$logs/$t.errors" 2>/dev/null || true)
    status=ok
    if [ "$rc" -ne 0 ]; then status="FAILED (exit $rc)"; failed=$((failed + 1)); fi
    if [ "${n:-0}" -ne 0 ]; then
      status="$status, oclgrind reported errors"
      reports=$((reports + 1))
    fi
    printf '%-20s %4ds  %s\n' "$t" "$took" "$status"
    if [ "$status" != ok ]; then
      tail -n 40 "$logs/$t.out"
      head -n 60 "$logs/$t.errors" 2>/dev/null
    fi
  done
done
grep -h "cases left out" "$logs"/*.out
echo "oclgrind: $count tests, $failed failed, $reports with oclgrind errors"
[ "$failed" -eq 0 ] && [ "$reports" -eq 0 ]
