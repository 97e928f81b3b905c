#!/usr/bin/env bash
# Session 50, call 4: the GPU tests of tuning and capture after the test fixes (call 3 failed on the new
# tests' own assertions), then fresh set 53 (make_held_out_53.py): auto beside the lean cuSPARSE pair, both dtypes.
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
TESTS_K="tune or capture or distributed" bash docs/lab/cpu-2026-12-04-session27/next_call.sh tests
python3 docs/lab/h100-2026-12-06-session50/make_held_out_53.py /tmp/h53 >/tmp/next/make53.log 2>&1
tail -n 3 /tmp/next/make53.log
timeout -k 10 400 python3 scripts/time_turns.py /tmp/h53/*.npz --kernels auto,cusparse:2 --dtype float32 float64 \
    --rounds 3 --budget 0.04 --out /tmp/next/turns53 >/tmp/next/turns53.log 2>&1
echo "turns53: exit $?"; tail -n 4 /tmp/next/turns53.log
tar -C /tmp -czf "$OUT/next.tgz" next
