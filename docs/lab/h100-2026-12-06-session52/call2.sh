#!/usr/bin/env bash
# Session 52, call 2 (predictions in this folder's README, "Call 2", written before the run): the GPU tests of the
# traffic-model gate, blocked, the tuner, capture and AMG (pyamg's wheel failed to install in call 1), then fresh
# set 64 timed: auto (the new gate), blocked, staged, segmented (auto's kernel on stripe-1M in float32) and the lean cuSPARSE pair, 3 rounds in turns, both dtypes.
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
R=/tmp/next
mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader
python3 docs/lab/h100-2026-12-06-session52/make_fresh_64.py /tmp/f64 >$R/make64.log 2>&1 &
TESTS_K="blocked or tune or capture or amg or auto" STEP_LIMIT_S=200 \
    bash docs/lab/cpu-2026-12-04-session27/next_call.sh tests >$R/tests-call.log 2>&1
tail -n 8 $R/tests-call.log
wait; cat $R/make64.log
timeout -k 10 330 python3 scripts/time_turns.py /tmp/f64/*.npz --kernels auto,blocked,staged,segmented,cusparse:2 \
    --dtype float32 float64 --rounds 3 --budget 0.03 --out $R/set64 >$R/set64.log 2>&1
echo "set64: exit $?"
tar -C /tmp -czf "$OUT/next.tgz" next
