#!/usr/bin/env bash
# Session 49, call 1: band's rotation on fresh set 46 (blind), auto/staged/band beside cuSPARSE on it, then the GPU
# suite on the tree with the rotated band entry (this folder's README).
set -u
cd "$(dirname "$0")/../../.."
nvidia-smi --query-gpu=name --format=csv,noheader
bash docs/lab/cpu-2026-12-04-session27/next_call.sh ab46 turns46 tests
