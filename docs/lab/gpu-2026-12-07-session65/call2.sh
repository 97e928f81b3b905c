#!/usr/bin/env bash
# Session 65, call 2 (predictions in this folder's README, written before the run): on an H200 only, fresh set 67
# first (session 55's call5.sh, the last run issue 17 waits on); then the SpMM, tuner and dia GPU tests on the
# mended tuner test and SpMM's dia rule; then fresh set 69 (the corpus families at 150K and 450K nonzeros, seed 11,
# k = 4, 8, 16, 32) through session 64's tuned_spmm.py: every candidate's timing per run. Every step stops by
# DEADLINE seconds after the start, under the tool's 600 s a call.
set -u
cd "$(dirname "$0")/../../.."
: "${DEADLINE:=575}"  # this call's default; h200_first.sh's helper reads it
# shellcheck source=docs/lab/gpu-2026-12-07-session66/h200_first.sh
source docs/lab/gpu-2026-12-07-session66/h200_first.sh
mkdir -p $OUT/tests && OUT=$OUT/tests TESTS_K="${TESTS_K:-spmm or tune or dia}" TESTS_LIMIT=$(left 200) \
    bash scripts/gpu_check.sh tests >/dev/null 2>&1
tar -xzOf $OUT/tests/results.tgz results/tests.log | grep -E "^FAILED|passed|failed" | tail -12
for nnz in 1.5e5 4.5e5; do
  limit=$(left 200); [ "$limit" -lt 20 ] && { echo "tuned_spmm $nnz: not run, no time left"; continue; }
  mkdir -p /tmp/c2/$nnz
  SEED=11 KS="4 8 16 32" timeout "$limit" python3 docs/lab/gpu-2026-12-07-session64/tuned_spmm.py /tmp/c2/$nnz $nnz \
      >/tmp/c2/$nnz/tuned_spmm.log 2>&1
  echo "tuned_spmm $nnz: exit $?"; grep -E "device time|FAILED|failed" /tmp/c2/$nnz/tuned_spmm.log | head -20
  tar -C /tmp -czf $OUT/c2.tgz c2
done
