#!/usr/bin/env bash
# Session 49, call 3: W3 on fresh set 47 (blind), then the GPU suite on the tree with R2 and W3 (this folder's README).
set -u
cd "$(dirname "$0")/../../.."
nvidia-smi --query-gpu=name --format=csv,noheader
bash docs/lab/cpu-2026-12-04-session27/next_call.sh turns47 tests
