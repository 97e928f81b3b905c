#!/usr/bin/env bash
# Session 48, call 2: fresh set 41 for W2 (float32 rle widths); on an H200, also sets 39 and 40 (this folder's README).
set -u
cd "$(dirname "$0")/../../.."
nvidia-smi --query-gpu=name --format=csv,noheader
steps="turns41"
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then steps="turns41 turns39 turns40"; fi
bash docs/lab/cpu-2026-12-04-session27/next_call.sh $steps
