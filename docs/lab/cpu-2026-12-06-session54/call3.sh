#!/usr/bin/env bash
# Session 54, call 3 (predictions in this folder's README, "Call 3", written before the run): fresh set 65 timed,
# auto (the library's rule), blocked, staged and the lean cuSPARSE pair, 3 rounds in turns, both dtypes.
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
R=/tmp/next
mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader
python3 docs/lab/cpu-2026-12-06-session54/make_fresh_65.py /tmp/f65 >$R/make65.log 2>&1
cat $R/make65.log
timeout -k 10 420 python3 scripts/time_turns.py /tmp/f65/*.npz --kernels auto,blocked,staged,cusparse:2 \
    --dtype float32 float64 --rounds 3 --budget 0.03 --out $R/set65 >$R/set65.log 2>&1
echo "set65: exit $?"
grep -E "npz|x cuSPARSE" $R/set65.log | tail -n 80
tar -C /tmp -czf "$OUT/next.tgz" next
