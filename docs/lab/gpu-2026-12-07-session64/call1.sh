#!/usr/bin/env bash
# Session 64, call 1, on any card (predictions in this folder's README, "Call 1", written before the run).
# On an H200: set 67 first (session 55's call5.sh, predictions in docs/lab/cpu-2026-12-06-session55/README.md).
# Then on any card: the stream probe, bench_spmm's suite tables against session 63's SpMM anchor, the hot path.
set -u
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
card=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$card"
mkdir -p /tmp/c1
case "$card" in
  *H200*)
    RMAT=${RMAT:-0} LIMIT=${LIMIT:-170} bash docs/lab/cpu-2026-12-06-session55/call5.sh >$OUT/set67-call.log 2>&1
    echo "set67: exit $?"; grep -E "exit|x cuSPARSE|geomean" $OUT/set67-call.log ;;
  *) echo "set 67 not run: not an H200" ;;
esac
timeout 60 python3 docs/lab/gpu-2026-12-07-session64/stream_probe.py >/tmp/c1/stream_probe.json 2>&1
echo "stream probe: exit $?"; cat /tmp/c1/stream_probe.json | head -30
timeout 200 python3 scripts/bench_spmm.py --out /tmp/c1/bench_spmm >/tmp/c1/bench_spmm.log 2>&1
echo "bench_spmm: exit $?"; grep -E "cached cuSPARSE ran|geomean|targets" /tmp/c1/bench_spmm.log | head -20
tar -C /tmp -czf $OUT/c1.tgz c1
timeout 60 python3 scripts/hot_path.py --json /tmp/c1/hot_path.json >/tmp/c1/hot_path.log 2>&1
echo "hot_path: exit $?"; tail -16 /tmp/c1/hot_path.log
tar -C /tmp -czf $OUT/c1.tgz c1
