#!/usr/bin/env bash
# Session 66, call 1 (predictions in this folder's README, written before the run). On an H200 only, fresh set 67
# first (session 55's call5.sh, the last run issue 17 waits on). Then the SpMM, tuner and dia GPU tests on the rule
# committed before the call (regk at k <= 4 under subwarp's thread cut; dia from 6,000 rows), and SpMM timings of
# every candidate at small k, none of them seen by the fit: session 65's grid (random rows of exactly m nonzeros,
# 4K-128K rows, m = 2-48, k = 2, 4, 8), fresh set 70 (the 29 corpus families at 250K and 800K nonzeros, seed 17,
# k = 2, 4, 8, 16), set 71 for dia's floor (the six diagonal families at 25K-160K nonzeros, 2.8K-32K rows, seed
# 19) and a second grid (6K-96K rows, m = 3-40, seeds + 1000). Every step stops by DEADLINE seconds after the
# start, under the tool's 600 s a call.
set -u
cd "$(dirname "$0")/../../.."
: "${DEADLINE:=565}"  # this call's default; h200_first.sh's helper reads it
# shellcheck source=docs/lab/gpu-2026-12-07-session66/h200_first.sh
source docs/lab/gpu-2026-12-07-session66/h200_first.sh
mkdir -p $OUT/tests && OUT=$OUT/tests TESTS_K="spmm or tune or dia" TESTS_LIMIT=$(left 110) \
    bash scripts/gpu_check.sh tests >/dev/null 2>&1
tar -xzOf $OUT/tests/results.tgz results/tests.log | grep -E "^FAILED|passed|failed" | tail -12
mkdir -p /tmp/c1
for nnz in 2.5e4 4e4 1.2e5 1.6e5; do
  limit=$(left 30); [ "$limit" -lt 15 ] && { echo "set 71 $nnz: not run, no time left"; continue; }
  mkdir -p /tmp/c1/set71/$nnz
  FAMILIES="stencil5 stencil7 stencil9 stencil27 stencil25 banded-fixed" SEED=19 KS="2 4 8 16" timeout "$limit" \
      python3 docs/lab/gpu-2026-12-07-session64/tuned_spmm.py /tmp/c1/set71/$nnz $nnz >/tmp/c1/set71/$nnz/tuned_spmm.log 2>&1
  echo "set 71 $nnz: exit $?, $(grep -c "k=" /tmp/c1/set71/$nnz/tuned_spmm.log) lines, $(( SECONDS - start )) s"
done
DEADLINE=$(left 100) python3 docs/lab/gpu-2026-12-07-session65/grid_short.py /tmp/c1/grid >/tmp/c1/grid.log 2>&1
echo "grid: exit $? $(grep -c . /tmp/c1/grid.log) lines, $(( SECONDS - start )) s"
for nnz in 2.5e5 8e5; do
  limit=$(left 90); [ "$limit" -lt 20 ] && { echo "set 70 $nnz: not run, no time left"; continue; }
  mkdir -p /tmp/c1/set70/$nnz
  SEED=17 KS="2 4 8 16" timeout "$limit" python3 docs/lab/gpu-2026-12-07-session64/tuned_spmm.py /tmp/c1/set70/$nnz \
      $nnz >/tmp/c1/set70/$nnz/tuned_spmm.log 2>&1
  echo "set 70 $nnz: exit $?, $(grep -c "k=" /tmp/c1/set70/$nnz/tuned_spmm.log) lines, $(( SECONDS - start )) s"
  grep -E "FAILED|failed|Error" /tmp/c1/set70/$nnz/tuned_spmm.log | head -5
done
limit=$(left 100)
[ "$limit" -ge 20 ] && ROWS="6000 12000 24000 48000 96000" LENGTHS="3 6 12 24 40" SEED=1000 DEADLINE=$limit \
    python3 docs/lab/gpu-2026-12-07-session65/grid_short.py /tmp/c1/held >/tmp/c1/held.log 2>&1
echo "held-out grid: $(grep -c . /tmp/c1/held.log 2>/dev/null) lines, $(( SECONDS - start )) s"
tar -C /tmp -czf $OUT/c1.tgz c1
