#!/usr/bin/env bash
# Session 49, call 2: R2 (band's rotation in float64, blind) and widths41 (information), then the GPU tests of band,
# rle and int64 indices on the tree with the corrected band/rle tests (this folder's README).
set -u
cd "$(dirname "$0")/../../.."
nvidia-smi --query-gpu=name --format=csv,noheader
bash docs/lab/cpu-2026-12-04-session27/next_call.sh ab46b widths41
TESTS_K="band or rle or int64_indices" OUT=/tmp/next/tests49 bash scripts/gpu_check.sh tests >/tmp/next/tests49.log 2>&1
tail -n 5 /tmp/next/tests49.log
tar -C /tmp -czf "$OUT/next.tgz" next
