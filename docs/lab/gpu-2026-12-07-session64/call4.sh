#!/usr/bin/env bash
# Session 64, call 4: the SpMM tuner on the 53 real matrices of ../shared/matrices (none was in any fit),
# k = 8 and 32, both dtypes (tuned_spmm.py with REAL=; predictions in this folder's README, "Call 4").
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
source scripts/device_matrices.sh unpack
mkdir -p /tmp/c4
REAL=shared-matrices KS=${KS:-"8 32"} timeout ${LIMIT:-420} python3 docs/lab/gpu-2026-12-07-session64/tuned_spmm.py \
    /tmp/c4 >/tmp/c4/tuned_spmm.log 2>&1
echo "tuned_spmm: exit $?"; grep -E "device time|FAILED|failed" /tmp/c4/tuned_spmm.log | head -30
tar -C /tmp -czf $OUT/c4.tgz c4
