#!/usr/bin/env bash
# Session 53, call 3 (predictions in this folder's README, written before the run): bench_spmv.py's suite with
# blocked in its kernel lists and auto under the traffic-model gate, then the hot path (blocked among its kernels).
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
OUT=${OUT:-/tmp/out} bash scripts/gpu_check.sh spmv hotpath
