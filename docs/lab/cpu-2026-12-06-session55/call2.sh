#!/usr/bin/env bash
# Session 55, call 2 (predictions in this folder's README, "Call 2", written before the run): fresh set 66 timed,
# auto beside blocked, staged, vector and segmented and the lean cuSPARSE pair, 3 rounds in turns, both dtypes.
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
R=/tmp/next
mkdir -p $R
python3 -c "import cupy; p = cupy.cuda.runtime.getDeviceProperties(0); \
print(p['name'].decode(), 'L2', p['l2CacheSize'], 'SMs', p['multiProcessorCount'])" | tee $R/device.txt
python3 docs/lab/cpu-2026-12-06-session55/make_fresh_66.py /tmp/f66 >$R/make66.log 2>&1
cat $R/make66.log
timeout -k 10 ${LIMIT:-420} python3 scripts/time_turns.py /tmp/f66/*.npz \
    --kernels auto,blocked,staged,vector,segmented,cusparse:2 \
    --dtype float32 float64 --rounds 3 --budget 0.03 --out $R/set66 >$R/set66.log 2>&1
echo "set66: exit $?"
grep -E "npz|x cuSPARSE" $R/set66.log
tar -C /tmp -czf "$OUT/next.tgz" next
