#!/usr/bin/env bash
# Session 51, call 10 (prediction in this folder's README, "Call 10", written before the run): bench_spmv.py's
# powerlaw-16M (web-like locality; its tiles read 1,302-1,526 lines of x, under the lines gate), blocked against
# staged beside the lean cuSPARSE pair: is the gate right on locality-type reuse?
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
R=/tmp/next
mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader
timeout -k 10 240 python3 scripts/time_turns.py gen:powerlaw:16000000:8:34000 --kernels auto,blocked,staged,cusparse:2 \
    --dtype float32 float64 --rounds 3 --budget 0.05 --out $R/powerlaw16 >$R/powerlaw16.log 2>&1
echo "powerlaw16: exit $?"; grep -E "ms " $R/powerlaw16.log | sed 's/rounds.*//'
tar -C /tmp -czf "$OUT/next.tgz" next
