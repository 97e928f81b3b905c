#!/usr/bin/env bash
# Session 48, call 5: B4 on fresh set 44 (blind), then the GPU suite on the tree with B4 (this folder's README).
set -u
cd "$(dirname "$0")/../../.."
nvidia-smi --query-gpu=name --format=csv,noheader
bash docs/lab/cpu-2026-12-04-session27/next_call.sh ab44 tests
