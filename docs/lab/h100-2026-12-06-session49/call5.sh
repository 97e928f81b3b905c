#!/usr/bin/env bash
# Session 49, call 5: M2, the medium class's zone: set 49 (fit) and set 50 (test, blind), both dtypes.
set -u
cd "$(dirname "$0")/../../.."
nvidia-smi --query-gpu=name --format=csv,noheader
bash docs/lab/cpu-2026-12-04-session27/next_call.sh zone49
