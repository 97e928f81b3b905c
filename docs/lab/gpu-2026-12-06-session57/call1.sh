#!/usr/bin/env bash
# Session 57, call 1 (predictions in this folder's README, written before the run): the whole GPU
# suite and the hot path on the sources session 56 left untested on a GPU, then session 56's call 5
# (spmm_k.py: float32 k = 2 with float2 loads, DIA_MAX_K), then dia_try.py (call 2's prediction 4, moved here).
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
python3 -c 'import cupy; d = cupy.cuda.Device(); p = cupy.cuda.runtime.getDeviceProperties(d.id)
print(p["name"].decode(), "L2", p["l2CacheSize"], "SMs", p["multiProcessorCount"])' | tee $OUT/device.txt
bash scripts/gpu_check.sh tests hotpath
mkdir -p $OUT/spmm_k
timeout 200 python3 docs/lab/gpu-2026-12-06-session56/spmm_k.py $OUT/spmm_k >$OUT/spmm_k/spmm_k.log 2>&1
echo "spmm_k: exit $?"; tail -n 32 $OUT/spmm_k/spmm_k.log
mkdir -p $OUT/dia_try
timeout 150 python3 docs/lab/gpu-2026-12-06-session57/dia_try.py $OUT/dia_try >$OUT/dia_try/dia_try.log 2>&1
echo "dia_try: exit $?"; cat $OUT/dia_try/dia_try.log
