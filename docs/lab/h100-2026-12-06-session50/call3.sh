#!/usr/bin/env bash
# Session 50, call 3: the GPU suite on the tuner's new scale (kernels/abs_product.cu, 6eecc44) and cg's capture
# decision in one place (d5ac7cd), then spla.tune on the suite's stencils, where it raised in call 2.
set -u
cd "$(dirname "$0")/../../.."
nvidia-smi --query-gpu=name --format=csv,noheader
bash docs/lab/cpu-2026-12-04-session27/next_call.sh tests
mkdir -p /tmp/next && PYTHONPATH=$PWD timeout 200 python3 docs/lab/h100-2026-12-06-session50/tune_stencils.py \
    gen:poisson2d:4096 gen:poisson3d:160 2>&1 | tee /tmp/next/tune_stencils.log
tar -C /tmp -czf "$OUT/next.tgz" next
