#!/usr/bin/env bash
# Session 64, call 6: the GPU tests that reach SpMM's rule and tuner, then fresh set 68 (every corpus family at
# 200K and 600K nonzeros with seed 7: sizes and seeds no SpMM rule saw) through tuned_spmm.py, k = 8 and 32,
# both dtypes (predictions in this folder's README, "Call 6").
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT/tests && OUT=$OUT/tests TESTS_K="spmm or tune or graph" TESTS_LIMIT=150 bash scripts/gpu_check.sh tests >/dev/null 2>&1
tar -xzOf $OUT/tests/results.tgz results/tests.log | tail -3
for nnz in 2e5 6e5; do
  mkdir -p /tmp/c6/$nnz
  SEED=7 KS="8 32" timeout ${LIMIT:-150} python3 docs/lab/gpu-2026-12-07-session64/tuned_spmm.py /tmp/c6/$nnz $nnz \
      >/tmp/c6/$nnz/tuned_spmm.log 2>&1
  echo "tuned_spmm $nnz: exit $?"; grep -E "device time|FAILED|failed" /tmp/c6/$nnz/tuned_spmm.log | head -12
  tar -C /tmp -czf $OUT/c6.tgz c6
done
