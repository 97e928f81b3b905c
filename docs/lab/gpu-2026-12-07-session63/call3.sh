#!/usr/bin/env bash
# Session 63, call 3 (predictions in this folder's README, written before the run), on any card: the anchor's
# GPU tests (it now times its candidates by held-stream device time and leaves out those that synchronise),
# then schedules.py with fused's segments of 128, 256 and 512 nonzeros at k = 16, 32 and 64 on all 12 skewed
# families. Set 67 is call 4 (H200 only).
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
here=docs/lab/gpu-2026-12-07-session63
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT/tests && OUT=$OUT/tests TESTS_K="cusparse or spmm_all_kernels" TESTS_LIMIT=90 \
    bash scripts/gpu_check.sh tests
grep -E "passed|failed" $OUT/tests/summary.log | tail -3
mkdir -p /tmp/segments
KS="${KS:-16 32 64}" VARIANTS="fused-s128 fused-s256 fused-s512" timeout ${SCHED_LIMIT:-330} \
    python3 $here/schedules.py /tmp/segments ${NNZ:-8e6} >/tmp/segments/segments.log 2>&1
echo "segments: exit $?"; cat /tmp/segments/segments.log; tar -C /tmp -czf $OUT/segments.tgz segments
