#!/usr/bin/env bash
# Session 59, call 2 (predictions in this folder's README): fresh set 67 (100-156M nonzeros, session 55's call 5 as
# it ran on an H100 in session 56) on an H200, the held-out check at the top of the size range.
set -u
cd "$(dirname "$0")/../../.."
card=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$card"
# set 67 has run on an H100 (session 56): only an H200 adds to it
case "$card" in *H200*) ;; *) [ "${FORCE:-0}" = 1 ] || { echo "not an H200: set 67 not run"; exit 0; } ;; esac
LIMIT=${LIMIT:-240} bash docs/lab/cpu-2026-12-06-session55/call5.sh >$OUT/set67-call.log 2>&1; echo "set67: exit $?"
grep -E "exit|x cuSPARSE|geomean" $OUT/set67-call.log
