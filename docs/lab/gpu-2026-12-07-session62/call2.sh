#!/usr/bin/env bash
# Session 62, call 2: session 61's call 3 without the dropped tiles (whose patch no longer applies over this
# session's fused): Nsight Compute on powerlaw-heavy (8M nonzeros) at k = 32 and 64, float32, adaptive's
# launches and cuSPARSE SpMM, then row_order.py. Predictions in this folder's README.
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
s61=docs/lab/gpu-2026-12-07-session61
sections="--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats"
sections="$sections --section WarpStateStats"
profile() {  # name, regex, count, kernel, k
  timeout 80 ncu --clock-control none -k "regex:$2" -c "$3" $sections \
      python3 $s61/profile_wide.py powerlaw-heavy 8e6 "$5" float32 "$4" >$OUT/ncu-$1.txt 2>&1
  echo "ncu $1: exit $?"
}
profile adaptive32 "spla_spmm_(warp|subwarp|init)" 10 adaptive 32
profile cusparse32 "(?i)(csrmm|spmm)" 3 cusparse 32
profile adaptive64 "spla_spmm_(warp|subwarp|init)" 10 adaptive 64
profile cusparse64 "(?i)(csrmm|spmm)" 3 cusparse 64
grep -h -E "^  [A-Za-z_].*\(|relative error|Duration|DRAM Throughput|L2 Hit Rate|L1/TEX Hit|Achieved Occupancy|Registers Per|Memory Throughput|Stall Long|Stall LG" \
    $OUT/ncu-*.txt | cut -c1-150 | head -200
mkdir -p /tmp/order
timeout 120 python3 $s61/row_order.py /tmp/order >/tmp/order/row_order.log 2>&1; echo "row_order: exit $?"
cat /tmp/order/row_order.log; tar -C /tmp -czf $OUT/order.tgz order
