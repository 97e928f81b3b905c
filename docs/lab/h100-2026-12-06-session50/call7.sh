#!/usr/bin/env bash
# Session 50, call 7: the GPU suite on the tree with L1 (87b768d) and the tuner's fix, then fresh set 56 (the test
# of L2: L1's row cut at 300 in place of 400), read after the run with L2 already written in the README.
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
bash docs/lab/cpu-2026-12-04-session27/next_call.sh tests
python3 docs/lab/h100-2026-12-06-session50/make_short_wide_56.py /tmp/w56 >/tmp/next/make56.log 2>&1
timeout -k 10 200 python3 scripts/time_turns.py /tmp/w56/*.npz \
    --kernels auto,vector,warp:32,staged,adaptive2,segmented,cusparse:2 --dtype float32 float64 \
    --rounds 3 --budget 0.03 --out /tmp/next/wide56 >/tmp/next/wide56.log 2>&1
echo "wide56: exit $?"
tar -C /tmp -czf "$OUT/next.tgz" next
