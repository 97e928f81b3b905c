#!/usr/bin/env bash
# Session 50, call 2: the SpMV suite script (bench_spmv.py, last run in session 7 under the fair protocol), the hot
# path and the generated suite report, on the tree as committed (nothing in the kernels or planning has changed
# since call 1's GPU suite).
set -u
cd "$(dirname "$0")/../../.."
nvidia-smi --query-gpu=name --format=csv,noheader
SPMV_LIMIT=300 bash scripts/gpu_check.sh spmv hotpath suite
