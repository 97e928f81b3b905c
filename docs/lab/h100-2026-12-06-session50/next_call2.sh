#!/usr/bin/env bash
# Written in session 50 for the next session (predictions in this folder's README, "Next calls"): short-wide
# matrices beside their column bands (make_column_bands.py, bands of 2M columns: 8 MB of x in float32), so staged's
# concurrent tiles gather from one band of x at a time. Times staged, vector and auto on both forms, both dtypes.
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
H=docs/lab/h100-2026-12-06-session50
mkdir -p /tmp/next
nvidia-smi --query-gpu=name --format=csv,noheader
python3 $H/make_short_wide_54.py /tmp/w54 fit >/dev/null 2>&1
python3 $H/make_short_wide_56.py /tmp/w56 >/dev/null 2>&1
python3 $H/make_short_wide_57.py /tmp/w57 >/dev/null 2>&1
SOURCES="/tmp/w54/wide-800x20k-over-20M.npz /tmp/w54/wide-400x50k-over-30M.npz /tmp/w56/wide-270x50k-over-40M.npz
  /tmp/w56/wide-ragged-500x5-35k-over-25M.npz /tmp/w57/spread-0.50-400x30k-over-50M.npz
  /tmp/w57/spread-0.80-900x10k-over-15M.npz /tmp/w56/wide-clustered-600x15k-over-30M.npz"
python3 $H/make_column_bands.py /tmp/bands 2e6 $SOURCES >/tmp/next/make-bands.log 2>&1
timeout -k 10 400 python3 scripts/time_turns.py $SOURCES /tmp/bands/*.npz --kernels auto,vector,staged,cusparse:2 \
    --dtype float32 float64 --rounds 3 --budget 0.03 --out /tmp/next/bands >/tmp/next/bands.log 2>&1
echo "bands: exit $?"
tar -C /tmp -czf "$OUT/next.tgz" next
