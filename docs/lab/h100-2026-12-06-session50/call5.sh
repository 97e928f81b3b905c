#!/usr/bin/env bash
# Session 50, call 5: set 53 again with every spla kernel beside auto, for the issue's "untuned choice within 15% of
# the best spla kernel" on matrices no rule was fitted to.
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
mkdir -p /tmp/next
nvidia-smi --query-gpu=name --format=csv,noheader
echo "sources $(bash scripts/gpu_check.sh fingerprint)" | tee /tmp/next/sources.txt
python3 docs/lab/h100-2026-12-06-session50/make_held_out_53.py /tmp/h53 >/tmp/next/make53.log 2>&1
timeout -k 10 480 python3 scripts/time_turns.py /tmp/h53/*.npz \
    --kernels auto,scalar,warp,vector,adaptive2,segmented,staged,dia,band,rle,cusparse:2 --dtype float32 float64 \
    --rounds 3 --budget 0.03 --out /tmp/next/kernels53 >/tmp/next/kernels53.log 2>&1
echo "kernels53: exit $?"; tail -n 3 /tmp/next/kernels53.log
tar -C /tmp -czf "$OUT/next.tgz" next
