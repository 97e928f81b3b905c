#!/usr/bin/env bash
# Session 61, call 3 (predictions in this folder's README): Nsight Compute on powerlaw-heavy (8M nonzeros) at
# k = 32, float32: fused in column tiles (fused_tiles.patch applied to the working tree for this call only),
# adaptive's launches, and cuSPARSE SpMM. Then row_order.py (the same family's rows in order and shuffled, k = 16
# and 64, both dtypes; it times fused at k = 16 only, which the patch leaves as it was).
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
here=docs/lab/gpu-2026-12-07-session61
sections="--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats"
profile() {  # name, regex, count, kernel
  timeout 80 ncu --clock-control none -k "regex:$2" -c "$3" $sections \
      python3 $here/profile_wide.py powerlaw-heavy 8e6 32 float32 "$4" >$OUT/ncu-$1.txt 2>&1
  echo "ncu $1: exit $?"
}
profile fused spla_spmm_fused 1 fused
profile adaptive "spla_spmm_(warp|subwarp|init)" 10 adaptive
profile cusparse "(?i)(csrmm|spmm)" 3 cusparse
grep -h -E "^  [A-Za-z_].*\(|relative error|Duration|DRAM Throughput|L2 Hit Rate|L1/TEX Hit|Achieved Occupancy|Registers Per|Memory Throughput" $OUT/ncu-*.txt | cut -c1-150 | head -150
mkdir -p /tmp/order
timeout 120 python3 $here/row_order.py /tmp/order >/tmp/order/row_order.log 2>&1; echo "row_order: exit $?"
cat /tmp/order/row_order.log; tar -C /tmp -czf $OUT/order.tgz order
