#!/usr/bin/env bash
# Session 66, call 3 (predictions in this folder's README, written before the run): fresh set 72 for regk's row
# floor (REGK_MIN_ROWS, fitted on call 1's sets): the 29 corpus families at 70K and 180K nonzeros, seed 23, k = 2
# and 4, both dtypes, every candidate timed by the tuner and the rule re-timed beside cuSPARSE. Stops by DEADLINE.
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
start=$SECONDS
left() { local l=$(( ${DEADLINE:-200} - (SECONDS - start) )); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
nvidia-smi --query-gpu=name --format=csv,noheader
echo "sources $(bash scripts/gpu_check.sh fingerprint)"
for nnz in 7e4 1.8e5; do
  limit=$(left 100); [ "$limit" -lt 15 ] && { echo "set 72 $nnz: not run, no time left"; continue; }
  mkdir -p /tmp/c3/set72/$nnz
  SEED=23 KS="2 4" timeout "$limit" python3 docs/lab/gpu-2026-12-07-session64/tuned_spmm.py /tmp/c3/set72/$nnz $nnz \
      >/tmp/c3/set72/$nnz/tuned_spmm.log 2>&1
  echo "set 72 $nnz: exit $?, $(grep -c "k=" /tmp/c3/set72/$nnz/tuned_spmm.log) lines, $(( SECONDS - start )) s"
done
tar -C /tmp -czf $OUT/c3.tgz c3
