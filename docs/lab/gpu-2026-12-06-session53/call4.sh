#!/usr/bin/env bash
# Session 53, call 4 (predictions in this folder's README, "Call 4", written before the run): Nsight Compute's DRAM
# bytes and L2 hit rate of staged and of blocked's launches on communities-12M-1M-70 (set 64, overpredicted) and
# pareto-graph-12M-deg4 (set 63, predicted well), float32: which side of the traffic model is wrong.
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
R=/tmp/next
mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader
python3 docs/lab/h100-2026-12-06-session52/make_fresh_64.py /tmp/m communities-12M-1M-70 >$R/make.log 2>&1 &
python3 -c "import sys; sys.path.insert(0, 'docs/lab/h100-2026-12-06-session51'); from pathlib import Path
import make_fresh_63 as m; Path('/tmp/m').mkdir(exist_ok=True)
print(m.make(('pareto-graph-12M-deg4', m.SET_63['pareto-graph-12M-deg4'], Path('/tmp/m'))))" >>$R/make.log 2>&1
wait; cat $R/make.log
METRICS=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,gpu__time_duration.sum
for m in communities-12M-1M-70 pareto-graph-12M-deg4; do
  for k in staged blocked; do
    timeout -k 5 100 ncu --clock-control none -k regex:spla_spmv --metrics $METRICS \
      python3 scripts/profile_spmv.py /tmp/m/$m.npz --kernel $k --calls 1 >$R/ncu-$m-$k.log 2>&1
    echo "$m $k: exit $?"
    grep -E "spla_spmv|dram__|lts__|gpu__time" $R/ncu-$m-$k.log | tail -n 24
    tar -C /tmp -czf "$OUT/next.tgz" next
  done
done
