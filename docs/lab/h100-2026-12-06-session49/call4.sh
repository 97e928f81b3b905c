#!/usr/bin/env bash
# Session 49, call 4: M1, vector and warp on rows that start on one L1 bank (probe set 48, information).
set -u
cd "$(dirname "$0")/../../.."
nvidia-smi --query-gpu=name --format=csv,noheader
bash docs/lab/cpu-2026-12-04-session27/next_call.sh probe48
