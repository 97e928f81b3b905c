#!/usr/bin/env bash
# Session 64, call 2, on any card (predictions in this folder's README, "Call 2", written before the run):
# the whole GPU suite on the SpMM tuner's code, then the tuner on every corpus family at 4M nonzeros
# (tuned_spmm.py; KS="8 64" here, k = 32 in a later call), results written after every run.
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT/tests && OUT=$OUT/tests TESTS_LIMIT=${TESTS_LIMIT:-200} bash scripts/gpu_check.sh tests >/dev/null 2>&1
grep -E "passed|failed" $OUT/tests/summary.log | tail -3
mkdir -p /tmp/c2
KS=${KS:-"8 64"} timeout ${LIMIT:-330} python3 docs/lab/gpu-2026-12-07-session64/tuned_spmm.py /tmp/c2 4e6 \
    >/tmp/c2/tuned_spmm.log 2>&1
echo "tuned_spmm: exit $?"; grep -E "device time|FAILED|failed" /tmp/c2/tuned_spmm.log | head -30
tar -C /tmp -czf $OUT/c2.tgz c2
