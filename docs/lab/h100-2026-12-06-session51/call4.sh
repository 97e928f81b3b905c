#!/usr/bin/env bash
# Session 51, call 4 (predictions in this folder's README, "Call 4", written before the run): fit set 60, blocked
# at 0.5-3 entries a row a block, beside every plausible spla kernel and the lean cuSPARSE pair.
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
H=docs/lab/h100-2026-12-06-session51
R=/tmp/next
mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader
python3 $H/make_low_60.py /tmp/w60 >$R/make60.log 2>&1; echo "make60: exit $?"; cat $R/make60.log
timeout -k 10 400 python3 scripts/time_turns.py /tmp/w60/*.npz \
    --kernels auto,blocked,staged,vector,segmented,adaptive2,cusparse:2 \
    --dtype float32 float64 --rounds 3 --budget 0.03 --out $R/low60 >$R/low60.log 2>&1
echo "low60: exit $?"
tar -C /tmp -czf "$OUT/next.tgz" next
