#!/usr/bin/env bash
# Session 51, call 9 (predictions in this folder's README, "Call 9", written before the run): the matrices of
# earlier sessions that the wide class now takes: set 53's short-wide rectangle and set 57 (short-wide rows of
# spread lengths), auto beside blocked, staged, vector and the lean cuSPARSE pair.
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
S=docs/lab/h100-2026-12-06-session50
R=/tmp/next
mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader
python3 $S/make_held_out_53.py /tmp/w53 short-wide-800x10M >$R/make53.log 2>&1 &
python3 $S/make_short_wide_57.py /tmp/w57 >$R/make57.log 2>&1
wait; echo "made: $(ls /tmp/w53 /tmp/w57 | wc -l) files"
timeout -k 10 200 python3 scripts/time_turns.py /tmp/w53/*.npz /tmp/w57/*.npz \
    --kernels auto,blocked,staged,vector,cusparse:2 \
    --dtype float32 float64 --rounds 3 --budget 0.03 --out $R/again5357 >$R/again5357.log 2>&1
echo "again5357: exit $?"
tar -C /tmp -czf "$OUT/next.tgz" next
