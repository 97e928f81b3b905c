#!/usr/bin/env bash
# Session 63, call 2 (predictions in this folder's README, written before the run), on any card: the GPU tests
# call 1 failed (the SpMM anchor's choice timed by events now), then schedules.py (windows, shorter segments,
# column tiles of X at k = 32 and 64), then Nsight Compute on the kept cuSPARSE algorithm, powerlaw-heavy
# float64 k = 64. Set 67 is call 3 (H200 only).
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
here=docs/lab/gpu-2026-12-07-session63
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT/tests && OUT=$OUT/tests TESTS_K="cusparse or spmm_all_kernels" TESTS_LIMIT=90 \
    bash scripts/gpu_check.sh tests
grep -E "passed|failed" $OUT/tests/summary.log | tail -3
mkdir -p /tmp/schedules
KS="${KS:-32 64}" timeout ${SCHED_LIMIT:-250} python3 $here/schedules.py /tmp/schedules ${NNZ:-8e6} \
    >/tmp/schedules/schedules.log 2>&1
echo "schedules: exit $?"; cat /tmp/schedules/schedules.log; tar -C /tmp -czf $OUT/schedules.tgz schedules
sections="--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats"
sections="$sections --section WarpStateStats"
timeout 90 ncu --clock-control none --profile-from-start off -c 2 $sections \
    python3 $here/profile_range.py powerlaw-heavy 8e6 64 float64 cusparse >$OUT/ncu-cusparse64.txt 2>&1
echo "ncu cusparse64: exit $?"
grep -h -E "^  [A-Za-z_].*\(|relative error|Duration|DRAM Throughput|L2 Hit Rate|L1/TEX Hit|Achieved Occupancy|Registers Per|Memory Throughput" \
    $OUT/ncu-*.txt | cut -c1-150 | head -40
