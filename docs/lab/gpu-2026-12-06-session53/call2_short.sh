#!/usr/bin/env bash
# Session 53: session 52's call 2 cut to fit what the failed starts left of the budget: the GPU tests that run the
# changed code (blocked, the traffic model, the AMG setup's row_ids, the CSR operations that find entries' rows,
# dia's sampled diagonals), then fresh set 64 in 2 rounds, not 3. Predictions: ../h100-2026-12-06-session52/README.md.
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
R=/tmp/next
mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader
python3 docs/lab/h100-2026-12-06-session52/make_fresh_64.py /tmp/f64 >$R/make64.log 2>&1 &
TESTS_K="blocked or auto or amg or multiply or take_rows or getitem or dia or turns" STEP_LIMIT_S=130 \
    bash docs/lab/cpu-2026-12-04-session27/next_call.sh tests >$R/tests-call.log 2>&1
tail -n 8 $R/tests-call.log
wait; cat $R/make64.log
timeout -k 10 250 python3 scripts/time_turns.py /tmp/f64/*.npz --kernels auto,blocked,staged,segmented,cusparse:2 \
    --dtype float32 float64 --rounds 2 --budget 0.03 --out $R/set64 >$R/set64.log 2>&1
echo "set64: exit $?"
tar -C /tmp -czf "$OUT/next.tgz" next
