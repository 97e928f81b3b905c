#!/usr/bin/env bash
# Session 65, call 1 (predictions in this folder's README, written before the run): the whole GPU suite on the
# segment rule taken again with its mended test, then, on an H200 only, fresh set 67 (session 55's call5.sh).
set -u
cd "$(dirname "$0")/../../.."
card=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$card"
echo "sources $(bash scripts/gpu_check.sh fingerprint)"
mkdir -p $OUT/tests && OUT=$OUT/tests TESTS_LIMIT=${TESTS_LIMIT:-270} bash scripts/gpu_check.sh tests
grep -E "passed|failed" $OUT/tests/summary.log | tail -3
case "$card" in
  *H200*)
    RMAT=${RMAT:-0} LIMIT=${LIMIT:-170} bash docs/lab/cpu-2026-12-06-session55/call5.sh >$OUT/set67-call.log 2>&1
    echo "set67: exit $?"; grep -E "exit|x cuSPARSE|geomean" $OUT/set67-call.log ;;
  *) echo "set 67 not run: not an H200" ;;
esac
