#!/usr/bin/env bash
# Session 55, call 1 (predictions in this folder's README, "Call 1", written before the run): the card's L2, the GPU
# suite on main (the footprint model's first whole run), and fresh set 65 re-timed on this card.
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
R=/tmp/next
mkdir -p $R
python3 -c "import cupy; p = cupy.cuda.runtime.getDeviceProperties(0); \
print(p['name'].decode(), 'L2', p['l2CacheSize'], 'SMs', p['multiProcessorCount'])" | tee $R/device.txt
# set 65 is written while the tests run (niced: the tests' host references come first)
nice -n 19 python3 docs/lab/cpu-2026-12-06-session54/make_fresh_65.py /tmp/f65 >$R/make65.log 2>&1 &
make=$!
bash scripts/gpu_check.sh tests
wait $make
cat $R/make65.log
timeout -k 10 240 python3 scripts/time_turns.py /tmp/f65/*.npz --kernels auto,blocked,staged,cusparse:2 \
    --dtype float32 float64 --rounds 3 --budget 0.03 --out $R/set65 >$R/set65.log 2>&1
echo "set65: exit $?"
grep -E "npz|x cuSPARSE" $R/set65.log
tar -C /tmp -czf "$OUT/next.tgz" next
