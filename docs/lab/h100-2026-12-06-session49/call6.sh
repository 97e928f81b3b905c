#!/usr/bin/env bash
# Session 49, call 6: M2 on set 51 (a second test set, blind), both dtypes.
set -u
cd "$(dirname "$0")/../../.."
nvidia-smi --query-gpu=name --format=csv,noheader
bash docs/lab/cpu-2026-12-04-session27/next_call.sh zone51
