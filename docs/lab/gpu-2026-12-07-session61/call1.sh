#!/usr/bin/env bash
# Session 61, call 1 (predictions in this folder's README, written before the run). On an H200 first: set 67 as
# session 59's call 2 runs it (the R-MAT graph left out for time). Then on any card: the SpMM and dia GPU tests on
# 1cf297a (one output_args for every SpMM launch's output tail; not yet run on a GPU).
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
card=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$card"
case "${SET67:-1}:$card" in
  1:*H200*)
    RMAT=${RMAT:-0} LIMIT=${LIMIT:-170} bash docs/lab/cpu-2026-12-06-session55/call5.sh >$OUT/set67-call.log 2>&1
    echo "set67: exit $?"; grep -E "exit|x cuSPARSE|geomean" $OUT/set67-call.log ;;
  *) echo "set 67 not run (not an H200, or SET67=0)" ;;
esac
mkdir -p $OUT/tests && OUT=$OUT/tests TESTS_K="${TESTS_K:-spmm or dia}" TESTS_LIMIT=${TESTS_LIMIT:-200} \
    bash scripts/gpu_check.sh tests
