#!/usr/bin/env bash
# Session 48, call 6: B5 on fresh set 45 (blind), then the GPU suite on the tree with B5 (this folder's README).
set -u
cd "$(dirname "$0")/../../.."
nvidia-smi --query-gpu=name --format=csv,noheader
bash docs/lab/cpu-2026-12-04-session27/next_call.sh ab45 tests
