#!/usr/bin/env bash
# Session 63, call 5 (with the 370 s left), on any card: the last host-side change (8840c31: which cuSPARSE
# algorithm the SpMM anchor ran, in `spla spmm`'s report and bench_spmm's records) through the GPU tests that
# reach it, then a quick bench_spmm run whose summary names the algorithms.
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT/tests && OUT=$OUT/tests TESTS_K="cusparse or spmm_all_kernels or spmm_report" TESTS_LIMIT=80 \
    bash scripts/gpu_check.sh tests
grep -E "passed|failed" $OUT/tests/summary.log | tail -3
mkdir -p /tmp/bq && timeout 90 python3 scripts/bench_spmm.py --quick --ks 8 32 --out /tmp/bq >/tmp/bq/log.txt 2>&1
echo "bench_spmm --quick: exit $?"; grep -E "cached cuSPARSE ran|geomean" /tmp/bq/log.txt | head; tar -C /tmp -czf $OUT/bq.tgz bq
