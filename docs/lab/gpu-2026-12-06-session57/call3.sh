#!/usr/bin/env bash
# Session 57, call 3 (predictions in this folder's README, written before the run): the batched dia
# SpMM and SpMM's short-row rule (subwarp) in the library: their GPU tests, spmm_k.py and regk_cut.py
# again, a column-major X under the new rule, then bench_spmm.py.
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
here=docs/lab/gpu-2026-12-06-session57
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
TESTS_K="spmm or dia or reliability" bash scripts/gpu_check.sh tests
# the device tool brings back 8 files: the steps' outputs travel packed, re-packed after each step
R=/tmp/lab
for step in spmm_k regk_cut f_order; do
  script=$here/$step.py; [ $step = spmm_k ] && script=docs/lab/gpu-2026-12-06-session56/spmm_k.py
  mkdir -p $R/$step
  timeout 150 python3 $script $R/$step >$R/$step/$step.log 2>&1; echo "$step: exit $?"; tail -n 60 $R/$step/$step.log
  tar -C /tmp -czf $OUT/lab.tgz lab
done
# last: the SpMM benchmark (its own results.tgz, beside the tests')
mkdir -p $OUT/bench && OUT=$OUT/bench bash scripts/gpu_check.sh spmm
