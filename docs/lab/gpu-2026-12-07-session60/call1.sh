#!/usr/bin/env bash
# Session 60, call 1 (predictions in this folder's README, written before the run). Session 59's call 2 (set 67
# first where the card is an H200; dia's TAIL build's tests and dia_rule.py), with the SpMM tests added (adaptive's
# segmented rows now start from a launch, so the hot path packs it); then SpMM's host cost a call on a power law
# with a row past the segment cut, main before that change (build/before, carried) and this tree, in turns.
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
R=/tmp/lab
mkdir -p $R
TESTS_K="dia or spmm" TESTS_LIMIT=200 RULE_LIMIT=${RULE_LIMIT:-120} bash docs/lab/gpu-2026-12-06-session59/call2.sh
for turn in $(seq "${TURNS:-2}"); do  # TURNS=1 where device time is short
  for tree in before after; do
    path=$PWD; [ $tree = before ] && path=$PWD/build/before
    PYTHONPATH=$path timeout 60 python3 scripts/hot_path.py --k 8 --calls 2000 --repeat 5 \
        --matrix gen:powerlaw:4096:4:3000 --json $R/hot_path_${tree}_$turn.json >$R/hot_path_${tree}_$turn.log 2>&1
    echo "hot_path $tree $turn: exit $?"; grep -E "spmm|SpMM|left out" $R/hot_path_${tree}_$turn.log
  done
  tar -C /tmp -czf $OUT/lab.tgz lab
done
