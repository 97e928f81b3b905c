#!/usr/bin/env bash
# Session 51, call 6 (predictions in this folder's README, "Call 6", written before the run): blocked with a row a
# nonempty (block, row) pair only: the GPU tests that reach it, then sets 61, 60 and 59 again (all kernels of
# calls 3b-5), beside the lean cuSPARSE pair.
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
H=docs/lab/h100-2026-12-06-session51
R=/tmp/next
mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader
SECONDS=0
(python3 $H/make_fresh_61.py /tmp/w61 && python3 $H/make_low_60.py /tmp/w60 && python3 $H/make_fresh_59.py /tmp/w59) \
    >$R/make.log 2>&1 &
MAKE=$!
TESTS_K="blocked or capture or tune or spmv_gpu" bash docs/lab/cpu-2026-12-04-session27/next_call.sh tests
wait $MAKE; echo "make: exit $? at ${SECONDS}s"
for set in 61 60 59; do
  timeout -k 10 200 python3 scripts/time_turns.py /tmp/w$set/*.npz \
      --kernels auto,blocked,staged,vector,segmented,adaptive2,cusparse:2 \
      --dtype float32 float64 --rounds 3 --budget 0.03 --out $R/again$set >$R/again$set.log 2>&1
  echo "set $set: exit $? at ${SECONDS}s"
  tar -C /tmp -czf "$OUT/next.tgz" next
done
