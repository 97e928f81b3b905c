#!/usr/bin/env bash
# Session 57, call 2 (predictions in this folder's README, written before the run): CG's loop against
# its graph over dia, SpMM's regk cut on irregular rows, then Nsight Compute on dia's SpMM (and
# subwarp's) at Poisson 4096^2.
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
here=docs/lab/gpu-2026-12-06-session57
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
echo "sources $(bash scripts/gpu_check.sh fingerprint)" | tee -a $OUT/device.txt
timeout 100 python3 $here/cg_dia_cut.py $OUT >$OUT/cg_dia_cut.log 2>&1; echo "cg_dia_cut: exit $?"; cat $OUT/cg_dia_cut.log
timeout 240 python3 $here/regk_cut.py $OUT >$OUT/regk_cut.log 2>&1; echo "regk_cut: exit $?"; tail -n 60 $OUT/regk_cut.log
profile() {  # name, kernel regex, args of profile_spmm.py
  local name=$1 regex=$2; shift 2
  timeout 90 ncu --clock-control none -k "regex:$regex" -s 2 -c 1 --section SpeedOfLight \
      --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats --section SchedulerStats \
      --section LaunchStats --section SourceCounters python3 $here/profile_spmm.py "$@" >$OUT/ncu-$name.txt 2>&1
  echo "ncu $name: exit $?"
}
profile dia-f64-k8 spla_spmm_dia 4096 8 float64 dia
profile dia-f32-k8 spla_spmm_dia 4096 8 float32 dia
profile subwarp-f64-k32 spla_spmm_subwarp 2048 32 float64 subwarp
profile dia-f64-k32 spla_spmm_dia 2048 32 float64 dia
grep -h -E "^  [a-z_]+spmm|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Stall|Issued Warp|No Eligible|L2 Hit|L1/TEX Hit" $OUT/ncu-*.txt | head -120
