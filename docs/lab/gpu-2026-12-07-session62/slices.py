"""Session 62: fused's 32-lane classes with k spread over their lanes (slice_sums) against k in every lane.

On every skewed corpus family (auto's fused branch) at k = 8 and 16, both dtypes: fused-sliced (rows
over 128 nonzeros and the segments spread k over their lanes), fused-regs (they do not: fused before
this session), adaptive and cuSPARSE SpMM. Each is
checked against a float64 product, then timed in turns (3 rounds, device time; variants run through the
backend's plan hook, so their per-call figures are not the hot path's and are not reported). Prints a
line per (matrix, dtype, k), then each variant over fused-regs per half; writes slices.json.

    [KS="8 16"] PYTHONPATH=. python3 docs/lab/gpu-2026-12-07-session62/slices.py OUT_FOLDER [NNZ]
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import cupy
import cupyx.scipy.sparse as cusp
import numpy as np

import spla
from spla import bench
from spla.backends.cuda import spmm as cuda_spmm
from spla.bench import corpus
from spla.bench.spmv import time_rounds
from spla.bench.variants import spmm_kernel
from spla.planning import spmm as spmm_planning

KS = tuple(int(k) for k in os.environ.get("KS", "8 16").split())
KERNELS = ("fused-sliced", "fused-regs", "adaptive", "cusparse")
TOLERANCE = {"float32": 1e-4, "float64": 1e-12}


def skewed_families() -> list:
    """(half, family) for every corpus family whose rows send auto's SpMM to fused at k = 16."""
    found = []
    for name in corpus.families():
        mean, longest = spmm_planning._row_stats(corpus.build(name, 200_000))
        if spmm_planning.choose_from_stats(mean, longest, 16) == "fused":
            found.append((corpus.FAMILIES[name].half, name))
    return found


def runner(A, X, Y, name):
    kernel, options = spmm_kernel(name)
    if options:
        return lambda: cuda_spmm.spmm(A, X, kernel=kernel, out=Y, **options)
    return lambda: spla.spmm(A, X, out=Y, kernel=kernel)


def main(out: Path, nnz: int) -> None:
    out.mkdir(parents=True, exist_ok=True)
    records = []
    for half, name in skewed_families():
        host = corpus.build(name, nnz)
        A64 = cusp.csr_matrix((cupy.asarray(host.data, dtype=np.float64), cupy.asarray(host.indices),
                               cupy.asarray(host.indptr)), shape=host.shape)
        mean, longest = spmm_planning._row_stats(host)
        for dtype in ("float32", "float64"):
            A = host.astype(dtype).to_device()
            for k in KS:
                X = cupy.random.default_rng(k).uniform(-1, 1, (host.shape[1], k)).astype(dtype)
                Y = cupy.empty((host.shape[0], k), dtype)
                want = A64 @ X.astype(np.float64)
                runs, errors = {}, {}
                for kernel in KERNELS:
                    Y.fill(np.nan)
                    run = runner(A, X, Y, kernel)
                    run()
                    errors[kernel] = float(cupy.linalg.norm(Y - want) / cupy.linalg.norm(want))
                    if errors[kernel] <= TOLERANCE[dtype]:
                        runs[kernel] = run
                del want
                _, device = time_rounds(cupy, runs, rounds=3, budget_s=0.02)
                us = {kn: float(np.median(v)) for kn, v in device.items()}
                records.append({"half": half, "matrix": name, "nnz": host.nnz, "dtype": dtype, "k": k,
                                "mean_row": mean, "max_row": int(longest), "errors": errors, "device_us": us})
                get = {kn: us.get(kn, float("nan")) for kn in KERNELS}
                print(f"{half} {name} {dtype} k={k} (mean {mean:.1f}, max {int(longest)}): device us "
                      + " ".join(f"{kn} {t:.1f}" for kn, t in get.items())
                      + f" | fused-sliced over fused-regs {get['fused-regs'] / get['fused-sliced']:.3f}x | "
                      f"fused-sliced x adaptive {get['adaptive'] / get['fused-sliced']:.2f}, x cuSPARSE "
                      f"{get['cusparse'] / get['fused-sliced']:.2f}"
                      + ("" if max(errors.values()) <= TOLERANCE[dtype] else f" | FAILED CHECK {errors}"), flush=True)
                (out / "slices.json").write_text(json.dumps({"environment": bench.environment(),
                                                             "records": records}, indent=1))
            A = None
        A64 = None
    for half in ("fit", "report"):
        for variant in ("fused-sliced", "adaptive"):
            rows = [r for r in records if r["half"] == half and {variant, "fused-regs"} <= r["device_us"].keys()]
            if rows:
                gains = [r["device_us"]["fused-regs"] / r["device_us"][variant] for r in rows]
                print(f"{half}: {variant} over fused-regs, device time: geomean {bench.geomean(gains):.3f}x, "
                      f"{min(gains):.3f}-{max(gains):.3f}x over {len(rows)} runs", flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(float(sys.argv[2])) if len(sys.argv) > 2 else 8_000_000)
