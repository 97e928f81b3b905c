#!/usr/bin/env bash
# Session 51, call 1: session 50's two prepared calls in one (one machine start). Predictions for both are in
# docs/lab/h100-2026-12-06-session50/README.md, "Next calls", written before this run.
set -u
cd "$(dirname "$0")/../../.."
S=docs/lab/h100-2026-12-06-session50
SECONDS=0
bash $S/next_call1.sh
cp "$OUT/next.tgz" "$OUT/call1a.tgz"
left=$((590 - SECONDS))
echo "next_call1 took ${SECONDS}s; ${left}s left for next_call2"
timeout -k 5 "$left" bash $S/next_call2.sh
echo "next_call2: exit $?"
