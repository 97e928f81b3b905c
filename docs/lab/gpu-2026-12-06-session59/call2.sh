#!/usr/bin/env bash
# Session 59, call 2 (predictions in this folder's README, written before the run). On an H200 first: fresh set 67
# (100-156M nonzeros, session 55's call 5 as it ran on an H100 in session 56; the R-MAT graph left out for time),
# the held-out check at the top of the size range. Then on any card: the SpMM and dia GPU tests (dia's TAIL
# instances) and dia_rule.py (the library's dia SpMM against session 57's kernel, device time).
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
here=docs/lab/gpu-2026-12-06-session59
card=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$card"
# set 67 has run on an H100 (session 56): only an H200 adds to it
case "${SET67:-1}:$card" in
  1:*H200*)
    RMAT=${RMAT:-0} LIMIT=${LIMIT:-170} bash docs/lab/cpu-2026-12-06-session55/call5.sh >$OUT/set67-call.log 2>&1
    echo "set67: exit $?"; grep -E "exit|x cuSPARSE|geomean" $OUT/set67-call.log ;;
  *) echo "set 67 not run (not an H200, or SET67=0)" ;;
esac
mkdir -p $OUT/tests && OUT=$OUT/tests TESTS_K="${TESTS_K:-dia}" bash scripts/gpu_check.sh tests
mkdir -p /tmp/rule
timeout ${RULE_LIMIT:-150} python3 $here/dia_rule.py /tmp/rule >/tmp/rule/dia_rule.log 2>&1; echo "dia_rule: exit $?"
cat /tmp/rule/dia_rule.log; tar -C /tmp -czf $OUT/rule.tgz rule
