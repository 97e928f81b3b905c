#!/usr/bin/env bash
# Session 51, call 2 (predictions in this folder's README, "Call 2", written before the run): the GPU tests that
# reach the new blocked kernel (and the capture and tuning tests that list every kernel), then fit set 58 timed
# with auto, staged, blocked and vector beside the lean cuSPARSE pair, and the regrouping's one-time cost.
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
H=docs/lab/h100-2026-12-06-session51
R=/tmp/next
mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader
SECONDS=0
python3 $H/make_wide_58.py /tmp/w58 >$R/make58.log 2>&1 &
MAKE=$!
TESTS_K="blocked or capture or tune" bash docs/lab/cpu-2026-12-04-session27/next_call.sh tests
wait $MAKE; echo "make58: exit $? at ${SECONDS}s"
timeout -k 10 300 python3 scripts/time_turns.py /tmp/w58/*.npz --kernels auto,staged,blocked,vector,cusparse:2 \
    --dtype float32 float64 --rounds 3 --budget 0.03 --out $R/wide58 >$R/wide58.log 2>&1
echo "wide58: exit $? at ${SECONDS}s"
tar -C /tmp -czf "$OUT/next.tgz" next
timeout -k 10 60 python3 $H/regroup_cost.py /tmp/w58/uniform-e8-over-40M.npz /tmp/w58/uniform-e512-over-16M.npz \
    /tmp/w58/uniform-e2048-over-40M.npz >$R/regroup.log 2>&1
echo "regroup: exit $?"; cat $R/regroup.log
tar -C /tmp -czf "$OUT/next.tgz" next
