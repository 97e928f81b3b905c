#!/usr/bin/env bash
# Session 48, call 3: B1 (set 42 at 2, 4 and 8 lanes; ncu on exact-32 and exact-30) and B2 (RLE_ROTATE's A/B), blind.
set -u
cd "$(dirname "$0")/../../.."
nvidia-smi --query-gpu=name --format=csv,noheader
bash docs/lab/cpu-2026-12-04-session27/next_call.sh turns42 ab48 ncu48
