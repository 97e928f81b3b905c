#!/usr/bin/env bash
# Session 62, call 3: the SpMM GPU tests with auto's new cut (skewed rows run fused past k = 16), then, on an H200
# only, set 67 as session 61's call1.sh runs it (the R-MAT graph left out for time; predictions in
# docs/lab/cpu-2026-12-06-session55/README.md, "Call 5").
set -u
cd "$(dirname "$0")/../../.."
card=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$card"
mkdir -p $OUT/tests && OUT=$OUT/tests TESTS_K="${TESTS_K:-spmm}" TESTS_LIMIT=${TESTS_LIMIT:-100} \
    bash scripts/gpu_check.sh tests
grep -E "passed|failed" $OUT/tests/summary.log | tail -2
case "$card" in
  *H200*)
    RMAT=${RMAT:-0} LIMIT=${LIMIT:-170} bash docs/lab/cpu-2026-12-06-session55/call5.sh >$OUT/set67-call.log 2>&1
    echo "set67: exit $?"; grep -E "exit|x cuSPARSE|geomean" $OUT/set67-call.log ;;
  *) echo "set 67 not run: not an H200" ;;
esac
