#!/usr/bin/env bash
# Session 61, call 1 (predictions in this folder's README, written before the run). On any card: the SpMM and dia
# GPU tests (1cf297a's output_args, and fused past k = 16 in column tiles), then fused_wide.py (fused against
# adaptive, warp, subwarp and cuSPARSE at k = 24/32/64 on the corpus's skewed families). Then, on an H200 only,
# set 67 as session 59's call 2 runs it (the R-MAT graph left out for time).
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
here=docs/lab/gpu-2026-12-07-session61
card=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$card"
mkdir -p $OUT/tests && OUT=$OUT/tests TESTS_K="${TESTS_K:-spmm or dia}" TESTS_LIMIT=${TESTS_LIMIT:-200} \
    bash scripts/gpu_check.sh tests
mkdir -p /tmp/wide
timeout ${WIDE_LIMIT:-220} python3 $here/fused_wide.py /tmp/wide ${WIDE_NNZ:-8e6} >/tmp/wide/fused_wide.log 2>&1
echo "fused_wide: exit $?"; cat /tmp/wide/fused_wide.log; tar -C /tmp -czf $OUT/wide.tgz wide
case "${SET67:-1}:$card" in
  1:*H200*)
    RMAT=${RMAT:-0} LIMIT=${LIMIT:-170} bash docs/lab/cpu-2026-12-06-session55/call5.sh >$OUT/set67-call.log 2>&1
    echo "set67: exit $?"; grep -E "exit|x cuSPARSE|geomean" $OUT/set67-call.log ;;
  *) echo "set 67 not run (not an H200, or SET67=0)" ;;
esac
