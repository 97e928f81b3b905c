#!/usr/bin/env bash
# Session 62, call 1 (predictions in this folder's README, written before the run): the SpMM GPU tests on
# fused's sliced classes, then slices.py (fused's classes from 32 lanes a row with k spread over their lanes,
# against fused-regs, fused-slices, adaptive and cuSPARSE at k = 8 and 16), then on an H200 set 67, as session
# 61's call1.sh runs it (its predictions in docs/lab/cpu-2026-12-06-session55/README.md, "Call 5").
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
here=docs/lab/gpu-2026-12-07-session62
card=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$card"
mkdir -p $OUT/tests && OUT=$OUT/tests TESTS_K="${TESTS_K:-spmm}" TESTS_LIMIT=${TESTS_LIMIT:-150} \
    bash scripts/gpu_check.sh tests
mkdir -p /tmp/slices
timeout ${SLICES_LIMIT:-150} python3 $here/slices.py /tmp/slices ${SLICES_NNZ:-8e6} >/tmp/slices/slices.log 2>&1
echo "slices: exit $?"; cat /tmp/slices/slices.log; tar -C /tmp -czf $OUT/slices.tgz slices
case "${SET67:-1}:$card" in
  1:*H200*)
    RMAT=${RMAT:-0} LIMIT=${LIMIT:-170} bash docs/lab/cpu-2026-12-06-session55/call5.sh >$OUT/set67-call.log 2>&1
    echo "set67: exit $?"; grep -E "exit|x cuSPARSE|geomean" $OUT/set67-call.log ;;
  *) echo "set 67 not run (not an H200, or SET67=0)" ;;
esac
