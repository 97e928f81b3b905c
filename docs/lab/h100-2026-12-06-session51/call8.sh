#!/usr/bin/env bash
# Session 51, call 8 (predictions in this folder's README, "Call 8", written before the run): the GPU tests that
# reach blocked (the lines gate changed a test's matrix), then fresh set 63 beside the lean cuSPARSE pair.
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
H=docs/lab/h100-2026-12-06-session51
R=/tmp/next
mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader
SECONDS=0
python3 $H/make_fresh_63.py /tmp/w63 >$R/make63.log 2>&1 &
MAKE=$!
TESTS_K="blocked" bash docs/lab/cpu-2026-12-04-session27/next_call.sh tests
wait $MAKE; echo "make63: exit $? at ${SECONDS}s"; cat $R/make63.log
timeout -k 10 300 python3 scripts/time_turns.py /tmp/w63/*.npz \
    --kernels auto,blocked,staged,vector,segmented,adaptive2,cusparse:2 \
    --dtype float32 float64 --rounds 3 --budget 0.03 --out $R/fresh63 >$R/fresh63.log 2>&1
echo "fresh63: exit $? at ${SECONDS}s"
tar -C /tmp -czf "$OUT/next.tgz" next
