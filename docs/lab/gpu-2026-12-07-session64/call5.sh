#!/usr/bin/env bash
# Session 64, call 5: tuned_spmm.py on every corpus family at 100K and 300K nonzeros (k = 8 and 32, both
# dtypes): the tuner's timings of subwarp and warp there test the short-rows cut fitted on call 4's fit half
# (predictions in this folder's README, "Call 5").
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
for nnz in 1e5 3e5; do
  mkdir -p /tmp/c5/$nnz
  KS="8 32" timeout ${LIMIT:-200} python3 docs/lab/gpu-2026-12-07-session64/tuned_spmm.py /tmp/c5/$nnz $nnz \
      >/tmp/c5/$nnz/tuned_spmm.log 2>&1
  echo "tuned_spmm $nnz: exit $?"; grep -E "device time|FAILED|failed" /tmp/c5/$nnz/tuned_spmm.log | head -12
  tar -C /tmp -czf $OUT/c5.tgz c5
done
