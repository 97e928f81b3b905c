#!/usr/bin/env bash
# Session 62, call 1 (predictions in this folder's README, written before the run). On an H200: set 67, as
# session 61's call1.sh runs it (its predictions in docs/lab/cpu-2026-12-06-session55/README.md, "Call 5"). On any
# other card: session 61's call 3 (Nsight at k = 32 with fused_tiles.patch applied to this copy, then row_order.py).
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
card=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$card"
s61=docs/lab/gpu-2026-12-07-session61
case "${WHAT:-auto}:$card" in
  auto:*H200*|set67:*)
    RMAT=${RMAT:-0} LIMIT=${LIMIT:-170} bash docs/lab/cpu-2026-12-06-session55/call5.sh >$OUT/set67-call.log 2>&1
    echo "set67: exit $?"; grep -E "exit|x cuSPARSE|geomean" $OUT/set67-call.log ;;
  *)
    # the device copy has no history to revert to: apply the patch for the profile and take it off after
    git apply $s61/fused_tiles.patch && echo "fused_tiles.patch applied"
    bash $s61/call3.sh
    git apply -R $s61/fused_tiles.patch && echo "fused_tiles.patch removed" ;;
esac
