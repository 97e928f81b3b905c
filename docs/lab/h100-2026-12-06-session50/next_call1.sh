#!/usr/bin/env bash
# Written in session 50 for the next session's first call (predictions in this folder's README, "Next calls"):
# the GPU suite on the tree with L2 and G (2466984 and later), fresh set 57 (G's test), and ncu's DRAM bytes and L2
# hit rate for vector against staged on set 54's 800x20k over 20M (the lockstep-sweep hypothesis).
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
H=docs/lab/h100-2026-12-06-session50
nvidia-smi --query-gpu=name --format=csv,noheader
bash docs/lab/cpu-2026-12-04-session27/next_call.sh tests
python3 $H/make_short_wide_57.py /tmp/w57 >/tmp/next/make57.log 2>&1
timeout -k 10 200 python3 scripts/time_turns.py /tmp/w57/*.npz \
    --kernels auto,vector,staged,adaptive2,segmented,cusparse:2 --dtype float32 float64 \
    --rounds 3 --budget 0.03 --out /tmp/next/wide57 >/tmp/next/wide57.log 2>&1
echo "wide57: exit $?"
tar -C /tmp -czf "$OUT/next.tgz" next
python3 $H/make_short_wide_54.py /tmp/w54 fit >/dev/null 2>&1
for k in vector staged; do
  timeout -k 10 120 ncu --clock-control none -k "regex:spla_spmv_$k" -s 1 -c 1 \
      --metrics dram__bytes_read.sum,lts__t_sector_hit_rate.pct,gpu__time_duration.sum \
      python3 scripts/profile_spmv.py /tmp/w54/wide-800x20k-over-20M.npz --kernel $k >/tmp/next/ncu-$k.log 2>&1
  echo "ncu $k: exit $?"; grep -E "dram__bytes|lts__t_sector_hit|gpu__time" /tmp/next/ncu-$k.log
done
tar -C /tmp -czf "$OUT/next.tgz" next
