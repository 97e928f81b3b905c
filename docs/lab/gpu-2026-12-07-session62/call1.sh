#!/usr/bin/env bash
# Session 62, call 1 (predictions in this folder's README, written before the run), on any card: the SpMM GPU
# tests, then slices.py (fused's 32-lane classes with k spread over their lanes, against fused-regs, adaptive and
# cuSPARSE at k = 8 and 16), then session 61's fused_wide.py at k = 24, 32 and 64, which now times fused's wide
# kernel (spla_spmm_fused_wide) against adaptive, warp, subwarp and cuSPARSE.
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
here=docs/lab/gpu-2026-12-07-session62
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT/tests && OUT=$OUT/tests TESTS_K="${TESTS_K:-spmm}" TESTS_LIMIT=${TESTS_LIMIT:-150} \
    bash scripts/gpu_check.sh tests
mkdir -p /tmp/slices /tmp/wide
timeout ${SLICES_LIMIT:-130} python3 $here/slices.py /tmp/slices ${NNZ:-8e6} >/tmp/slices/slices.log 2>&1
echo "slices: exit $?"; cat /tmp/slices/slices.log; tar -C /tmp -czf $OUT/slices.tgz slices
KS="24 32 64" timeout ${WIDE_LIMIT:-200} python3 docs/lab/gpu-2026-12-07-session61/fused_wide.py /tmp/wide ${NNZ:-8e6} \
    >/tmp/wide/fused_wide.log 2>&1
echo "fused_wide: exit $?"; cat /tmp/wide/fused_wide.log; tar -C /tmp -czf $OUT/wide.tgz wide
