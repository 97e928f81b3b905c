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
timeout -k 10 190 python3 scripts/time_turns.py /tmp/f65/*.npz --kernels auto,blocked,staged,cusparse:2 \
    --dtype float32 float64 --rounds 3 --budget 0.03 --out $R/set65 >$R/set65.log 2>&1
echo "set65: exit $?"
grep -E "npz|x cuSPARSE" $R/set65.log | tail -n 80
tar -C /tmp -czf "$OUT/next.tgz" next
# Then the footprint model (branch footprint, as a patch): its GPU tests and its traffic read on the GPU.
patch -p1 -s <docs/lab/cpu-2026-12-06-session54/footprint.patch && echo "patched"
timeout -k 5 50 python3 -m pytest -q -rfE -p no:cacheprovider -k "blocked or short_wide or traffic" \
    tests/ops/test_spmv_gpu.py tests/planning/test_blocked.py >$R/tests-footprint.log 2>&1
echo "footprint tests: exit $?"; tail -n 4 $R/tests-footprint.log; tar -C /tmp -czf "$OUT/next.tgz" next
timeout -k 5 30 python3 docs/lab/cpu-2026-12-06-session54/gpu_gains.py /tmp/f65/communities-1*.npz /tmp/f65/uniform-graph-16M-deg3.npz >$R/gains65-gpu.txt 2>&1
echo "gpu gains: exit $?"; cat $R/gains65-gpu.txt
tar -C /tmp -czf "$OUT/next.tgz" next
