#!/usr/bin/env bash
# Session 49, call 7: V1, vector's float32 width at 2 lanes: sets 49 and 51 (fit), set 52 (test, blind).
set -u
cd "$(dirname "$0")/../../.."
nvidia-smi --query-gpu=name --format=csv,noheader
bash docs/lab/cpu-2026-12-04-session27/next_call.sh widths52
