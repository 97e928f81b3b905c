#!/usr/bin/env bash
# Session 66, call 2 (predictions in this folder's README, written before the run), launched while call 1's machine
# is still warm: the whole GPU suite on the session's rule (regk at k <= 4 under subwarp's thread cut, dia from
# 6,000 rows).
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
echo "sources $(bash scripts/gpu_check.sh fingerprint)"
mkdir -p $OUT/tests && OUT=$OUT/tests TESTS_LIMIT=${TESTS_LIMIT:-300} bash scripts/gpu_check.sh tests >/dev/null 2>&1
tar -xzOf $OUT/tests/results.tgz results/tests.log | grep -E "^FAILED|passed|failed" | tail -15
