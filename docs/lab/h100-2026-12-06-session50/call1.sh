#!/usr/bin/env bash
# Session 50, call 1: the GPU suite on the tree with V1 (vector's float32 width, host-only, af1bcbc) and the
# evenly_spaced refactor (3bdd3d4), neither of which has run on a GPU yet.
set -u
cd "$(dirname "$0")/../../.."
nvidia-smi --query-gpu=name --format=csv,noheader
bash docs/lab/cpu-2026-12-04-session27/next_call.sh tests
