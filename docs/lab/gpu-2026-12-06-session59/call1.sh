#!/usr/bin/env bash
# Session 59, call 1 (predictions in this folder's README, written before the run). On any card: session 58's
# call 2 without set 67 (dia's masked remainder against the committed kernel, decide.py's pick copied into kernels/
# on this machine, the SpMM, dia and graph GPU tests on the tree: fused's packed launches, SpMM's alpha slot); then
# SpMM's host cost a call with main before fused was packed (build/before, carried) and this tree, in turns.
# Set 67 on an H200 is call 2 (call2.sh).
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
R=/tmp/lab
mkdir -p $R
pack() { tar -C /tmp -czf $OUT/lab.tgz lab; }
SET67=0 bash docs/lab/gpu-2026-12-06-session58/call2.sh
for turn in 1 2; do
  for tree in before after; do
    path=$PWD; [ $tree = before ] && path=$PWD/build/before
    PYTHONPATH=$path timeout 100 python3 scripts/hot_path.py --k 8 --calls 3000 --repeat 7 \
        --json $R/hot_path_k8_${tree}_$turn.json >$R/hot_path_k8_${tree}_$turn.log 2>&1
    echo "hot_path $tree $turn: exit $?"; grep -E "spmm|SpMM" $R/hot_path_k8_${tree}_$turn.log
  done
  pack
done
