#!/usr/bin/env bash
# Session 58, call 1 (predictions in this folder's README, written before the run). On an H200 first: fresh set 66
# re-timed (session 55's call 2 as it ran on an H100: no H200 has timed blocked). Then on any card: the SpMM, dia and
# graph GPU tests on this tree (SpMM's hot path; 3a79624's kernel edit has not run on a GPU), SpMM's host cost a call
# (hot_path.py --k 8) with main's spla before the hot path (build/before, carried) and this tree's, in turns, and dia's
# SpMM kernels by device time alone (dia_ab.py: session 56's, the committed, the remainder-batch try).
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
here=docs/lab/gpu-2026-12-06-session58
R=/tmp/lab
mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/device.txt
pack() { tar -C /tmp -czf $OUT/lab.tgz lab; }
if grep -q H200 $R/device.txt && [ "${SET66:-1}" = 1 ]; then
  OUT=$R bash docs/lab/cpu-2026-12-06-session55/call2.sh >$R/set66-call.log 2>&1; echo "set66: exit $?"
  tail -n 40 $R/set66-call.log; pack
fi
mkdir -p $OUT/tests && OUT=$OUT/tests TESTS_K="spmm or dia or graph" bash scripts/gpu_check.sh tests
for turn in 1 2; do
  for tree in before after; do
    path=$PWD; [ $tree = before ] && path=$PWD/build/before
    PYTHONPATH=$path timeout 100 python3 scripts/hot_path.py --k 8 --calls 3000 --repeat 7 \
        --json $R/hot_path_k8_${tree}_$turn.json >$R/hot_path_k8_${tree}_$turn.log 2>&1
    echo "hot_path $tree $turn: exit $?"; cat $R/hot_path_k8_${tree}_$turn.log
  done
  pack
done
mkdir -p $R/dia_ab
timeout 200 python3 $here/dia_ab.py $R/dia_ab >$R/dia_ab/dia_ab.log 2>&1; echo "dia_ab: exit $?"
cat $R/dia_ab/dia_ab.log; pack
