"""Session 63: fused with its rows in windows (FUSED_WINDOW_NNZ), or with shorter segments, against fused as it is.

On every skewed corpus family (auto's fused branch) at each k of KS, both dtypes: fused with one window and
segments of 1,024 nonzeros (the schedule before this session), with windows of 64K, 256K and 1M nonzeros,
and with segments of 256 and 128 nonzeros (rows past that cut), beside cuSPARSE SpMM (the fastest of its
CSR algorithms, named on each line). Each is checked against a float64 product, then timed in turns
(3 rounds, device time; variants run through the backend's plan hook, so no per-call figures). Prints a
line per (matrix, dtype, k), then each variant over fused per half and k; writes schedules.json.

    [KS="32 64"] PYTHONPATH=. python3 docs/lab/gpu-2026-12-07-session63/schedules.py OUT_FOLDER [NNZ]
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import cupy
import cupyx.scipy.sparse as cusp
import numpy as np

from spla import bench
from spla.backends.cuda.cusparse import spmm_anchor
from spla.bench import corpus
from spla.bench.spmv import time_rounds
from spla.bench.variants import register_spmm_variant

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "gpu-2026-12-07-session62"))
from slices import TOLERANCE, runner, skewed_families  # noqa: E402  (session 62's lab helpers)

KS = tuple(int(k) for k in os.environ.get("KS", "32 64").split())
VARIANTS = {"fused-w64k": {"window_nnz": 2**16}, "fused-w256k": {"window_nnz": 2**18},
            "fused-w1m": {"window_nnz": 2**20}, "fused-s256": {"segment_nnz": 256},
            "fused-s128": {"segment_nnz": 128}}
for variant, options in VARIANTS.items():
    register_spmm_variant(variant, "fused", **options)
KERNELS = ("fused", *VARIANTS, "cusparse")


def main(out: Path, nnz: int) -> None:
    out.mkdir(parents=True, exist_ok=True)
    records = []
    for half, name in skewed_families():
        host = corpus.build(name, nnz)
        A64 = cusp.csr_matrix((cupy.asarray(host.data, dtype=np.float64), cupy.asarray(host.indices),
                               cupy.asarray(host.indptr)), shape=host.shape)
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
                anchor = spmm_anchor(A, X, Y).name  # the CSR algorithm cusparse kept
                records.append({"half": half, "matrix": name, "nnz": host.nnz, "shape": list(host.shape),
                                "dtype": dtype, "k": k, "errors": errors, "device_us": us, "anchor": anchor})
                get = {kn: us.get(kn, float("nan")) for kn in KERNELS}
                best = min(VARIANTS, key=lambda kn: get[kn])
                print(f"{half} {name} {dtype} k={k}: device us " + " ".join(f"{kn} {t:.1f}" for kn, t in get.items())
                      + f" | best variant {best} {get['fused'] / get[best]:.3f}x fused, x cuSPARSE "
                      f"{get['cusparse'] / get[best]:.2f} (fused {get['cusparse'] / get['fused']:.2f}; {anchor})"
                      + ("" if max(errors.values()) <= TOLERANCE[dtype] else f" | FAILED CHECK {errors}"), flush=True)
                (out / "schedules.json").write_text(json.dumps({"environment": bench.environment(),
                                                              "records": records}, indent=1))
            A = None
        A64 = None
    for half in ("fit", "report"):
        for k in KS:
            for variant in VARIANTS:
                rows = [r for r in records if r["half"] == half and r["k"] == k
                        and {variant, "fused"} <= r["device_us"].keys()]
                if rows:
                    gains = [r["device_us"]["fused"] / r["device_us"][variant] for r in rows]
                    print(f"{half} k={k}: {variant} over fused, device time: geomean {bench.geomean(gains):.3f}x, "
                          f"{min(gains):.3f}-{max(gains):.3f}x over {len(rows)} runs", flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(float(sys.argv[2])) if len(sys.argv) > 2 else 8_000_000)
