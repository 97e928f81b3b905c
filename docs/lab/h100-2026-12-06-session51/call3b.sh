#!/usr/bin/env bash
# Session 51, call 3b: call 3's set 59 step again (its generator failed to pickle a lambda in call 3).
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
H=docs/lab/h100-2026-12-06-session51
R=/tmp/next
mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader
python3 $H/make_fresh_59.py /tmp/w59 >$R/make59.log 2>&1; echo "make59: exit $?"; cat $R/make59.log
timeout -k 10 300 python3 scripts/time_turns.py /tmp/w59/*.npz \
    --kernels auto,blocked,staged,vector,segmented,adaptive2,cusparse:2 \
    --dtype float32 float64 --rounds 3 --budget 0.03 --out $R/fresh59 >$R/fresh59.log 2>&1
echo "fresh59: exit $?"
tar -C /tmp -czf "$OUT/next.tgz" next
