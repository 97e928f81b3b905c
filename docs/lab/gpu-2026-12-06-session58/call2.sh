#!/usr/bin/env bash
# Session 58, call 2 (predictions in this folder's README, written before the run). On any card: dia's SpMM remainder
# tries against the committed kernel (dia_ab.py s57 tail masked); decide.py's pick, if any, copied into kernels/ on
# this machine and the SpMM, dia and graph GPU tests run on it; the hot path once more (SpMM's alpha slot written
# only when alpha changes). Last, on an H200: fresh set 67 re-timed (session 55's call 5 as it ran on an H100,
# 100-156M nonzeros).
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
here=docs/lab/gpu-2026-12-06-session58
R=/tmp/lab
mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/device.txt
pack() { tar -C /tmp -czf $OUT/lab.tgz lab; }
mkdir -p $R/dia_ab
timeout 150 python3 $here/dia_ab.py $R/dia_ab s57 tail masked >$R/dia_ab/dia_ab.log 2>&1; echo "dia_ab: exit $?"
cat $R/dia_ab/dia_ab.log
python3 $here/decide.py $R/dia_ab/dia_ab.json | tee $R/dia_ab/decision.txt; pack
pick=$(tail -n 1 $R/dia_ab/decision.txt)
if [ "$pick" = tail ] || [ "$pick" = masked ]; then
  cp $here/spmm_dia_$pick.cu kernels/spmm_dia.cu
  echo "kernels/spmm_dia.cu is now $pick: $(sha256sum kernels/spmm_dia.cu)" | tee $R/kernel.txt
fi
mkdir -p $OUT/tests && OUT=$OUT/tests TESTS_K="spmm or dia or graph" bash scripts/gpu_check.sh tests
timeout 60 python3 scripts/hot_path.py --k 8 --calls 3000 --repeat 7 --json $R/hot_path_k8.json >$R/hot_path_k8.log 2>&1
echo "hot_path: exit $?"; cat $R/hot_path_k8.log; pack
# last, since it is the longest (a call cut short still brings back the rest)
if grep -q H200 $R/device.txt && [ "${SET67:-1}" = 1 ]; then
  # straight to $OUT: call5.sh packs its own next.tgz after each step
  LIMIT=200 bash docs/lab/cpu-2026-12-06-session55/call5.sh >$OUT/set67-call.log 2>&1; echo "set67: exit $?"
  grep -E "exit|x the lean|geomean" $OUT/set67-call.log
fi
