#!/usr/bin/env bash
# Session 48, call 4: B3 (RLE_ROTATE=2 against the committed rle on fresh set 43, float32) and ncu48b, blind.
set -u
cd "$(dirname "$0")/../../.."
nvidia-smi --query-gpu=name --format=csv,noheader
bash docs/lab/cpu-2026-12-04-session27/next_call.sh ab43 ncu48b
