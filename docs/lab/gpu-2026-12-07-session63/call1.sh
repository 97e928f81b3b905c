#!/usr/bin/env bash
# Session 63, call 1 (predictions in this folder's README, written before the run), on any card: the whole GPU
# suite (kernels changed in session 62, and this session's find_class), then schedules.py (fused with row
# windows and with shorter segments at k = 32 and 64), then Nsight Compute on powerlaw-heavy float64 at k = 64:
# fused's wide launch and cuSPARSE. Set 67 is call 2 (H200 only).
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
here=docs/lab/gpu-2026-12-07-session63
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT/tests && OUT=$OUT/tests TESTS_LIMIT=${TESTS_LIMIT:-170} bash scripts/gpu_check.sh tests
grep -E "passed|failed" $OUT/tests/summary.log | tail -3
mkdir -p /tmp/schedules
KS="${KS:-32 64}" timeout ${SCHED_LIMIT:-230} python3 $here/schedules.py /tmp/schedules ${NNZ:-8e6} \
    >/tmp/schedules/schedules.log 2>&1
echo "schedules: exit $?"; cat /tmp/schedules/schedules.log; tar -C /tmp -czf $OUT/schedules.tgz schedules
sections="--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats"
sections="$sections --section WarpStateStats --section SourceCounters"
profile() {  # name, regex, count, kernel
  timeout 75 ncu --clock-control none -k "regex:$2" -c "$3" $sections \
      python3 docs/lab/gpu-2026-12-07-session61/profile_wide.py powerlaw-heavy 8e6 64 float64 "$4" \
      >$OUT/ncu-$1.txt 2>&1
  echo "ncu $1: exit $?"
}
profile fused64 "spla_spmm_fused_wide" 2 fused
profile cusparse64 "(?i)(csrmm|spmm)" 2 cusparse
grep -h -E "^  [A-Za-z_].*\(|relative error|Duration|DRAM Throughput|L2 Hit Rate|L1/TEX Hit|Achieved Occupancy|Registers Per|Memory Throughput|Stall Long|Stall LG" \
    $OUT/ncu-*.txt | cut -c1-150 | head -80
