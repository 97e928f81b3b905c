#!/usr/bin/env bash
# Session 51, call 7 (predictions in this folder's README, "Call 7", written before the run): the GPU suite on the
# tree with the blocked kernel and auto's "wide" class, then fresh set 62 timed with every plausible spla kernel
# beside the lean cuSPARSE pair.
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
H=docs/lab/h100-2026-12-06-session51
R=/tmp/next
mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader
SECONDS=0
python3 $H/make_fresh_62.py /tmp/w62 >$R/make62.log 2>&1 &
MAKE=$!
bash docs/lab/cpu-2026-12-04-session27/next_call.sh tests
wait $MAKE; echo "make62: exit $? at ${SECONDS}s"; cat $R/make62.log
timeout -k 10 400 python3 scripts/time_turns.py /tmp/w62/*.npz \
    --kernels auto,blocked,staged,vector,segmented,adaptive2,cusparse:2 \
    --dtype float32 float64 --rounds 3 --budget 0.03 --out $R/fresh62 >$R/fresh62.log 2>&1
echo "fresh62: exit $? at ${SECONDS}s"
tar -C /tmp -czf "$OUT/next.tgz" next
