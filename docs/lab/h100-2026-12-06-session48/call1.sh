#!/usr/bin/env bash
# Session 48, call 1: the GPU suite; on an H200, also sets 39 and 40 at every rle width (this folder's README).
set -u
cd "$(dirname "$0")/../../.."
nvidia-smi --query-gpu=name --format=csv,noheader
steps="tests"
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then steps="tests turns39 turns40"; fi
bash docs/lab/cpu-2026-12-04-session27/next_call.sh $steps
