#!/usr/bin/env bash
# Session 63, call 4, on any card: the whole GPU suite on the session's final library code (the fused kernel back
# to session 62's, the SpMM anchor as it stands), then, on an H200 only, set 67 as session 62's call3.sh runs it
# (predictions in docs/lab/cpu-2026-12-06-session55/README.md, "Call 5").
set -u
cd "$(dirname "$0")/../../.."
card=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$card"
mkdir -p $OUT/tests && OUT=$OUT/tests TESTS_LIMIT=${TESTS_LIMIT:-200} bash scripts/gpu_check.sh tests
grep -E "passed|failed" $OUT/tests/summary.log | tail -3
case "$card" in
  *H200*)
    RMAT=${RMAT:-0} LIMIT=${LIMIT:-170} bash docs/lab/cpu-2026-12-06-session55/call5.sh >$OUT/set67-call.log 2>&1
    echo "set67: exit $?"; grep -E "exit|x cuSPARSE|geomean" $OUT/set67-call.log ;;
  *) echo "set 67 not run: not an H200" ;;
esac
