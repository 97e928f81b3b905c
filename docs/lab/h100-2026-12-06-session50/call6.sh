#!/usr/bin/env bash
# Session 50, call 6: short-wide matrices, set 54 (fit) and set 55 (test, timed now and read only after the rule
# read off set 54 is written in the README): auto, vector (a warp a row at these lengths), warp:32, staged,
# adaptive2, segmented and the lean cuSPARSE pair, both dtypes.
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
H=docs/lab/h100-2026-12-06-session50
mkdir -p /tmp/next
nvidia-smi --query-gpu=name --format=csv,noheader
echo "sources $(bash scripts/gpu_check.sh fingerprint)" | tee /tmp/next/sources.txt
python3 $H/make_short_wide_54.py /tmp/w54 fit >/tmp/next/make54.log 2>&1
python3 $H/make_short_wide_54.py /tmp/w55 test >/tmp/next/make55.log 2>&1
for s in 54 55; do
  timeout -k 10 240 python3 scripts/time_turns.py /tmp/w$s/*.npz \
      --kernels auto,vector,warp:32,staged,adaptive2,segmented,cusparse:2 --dtype float32 float64 \
      --rounds 3 --budget 0.03 --out /tmp/next/wide$s >/tmp/next/wide$s.log 2>&1
  echo "wide$s: exit $?"  # set 55's figures stay unread until the rule is written
  tar -C /tmp -czf "$OUT/next.tgz" next
done
