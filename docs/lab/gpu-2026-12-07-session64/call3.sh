#!/usr/bin/env bash
# Session 64, call 3: the tuner's GPU tests after call 2's test fix (pruned candidates count), then
# tuned_spmm.py at k = 32 on every corpus family (predictions as call 2's, in this folder's README).
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT/tests && OUT=$OUT/tests TESTS_K="tune or spmm or cusparse" TESTS_LIMIT=150 bash scripts/gpu_check.sh tests >/dev/null 2>&1
grep -E "passed|failed" $OUT/tests/results.tgz >/dev/null; tar -xzOf $OUT/tests/results.tgz results/tests.log | tail -3
mkdir -p /tmp/c3
KS=${KS:-32} timeout ${LIMIT:-300} python3 docs/lab/gpu-2026-12-07-session64/tuned_spmm.py /tmp/c3 4e6 \
    >/tmp/c3/tuned_spmm.log 2>&1
echo "tuned_spmm: exit $?"; grep -E "device time|FAILED|failed" /tmp/c3/tuned_spmm.log | head -30
tar -C /tmp -czf $OUT/c3.tgz c3
