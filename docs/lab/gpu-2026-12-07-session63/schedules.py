"""Session 63: fused with its rows in windows (FUSED_WINDOW_NNZ), shorter segments, or X in column tiles.

On every skewed corpus family (auto's fused branch) at each k of KS, both dtypes: fused as it is (one
window, segments of 1,024 nonzeros), with windows of 64K and 256K nonzeros, with segments of 256, and over
X in column tiles of 128 or 256 bytes a row (fused at the tile's width, a pass a tile: ``tiled``), beside
cuSPARSE SpMM (the fastest of its CSR algorithms, named on each line). Each is checked against a float64
product, then timed in turns (3 rounds, device time; variants run through the backend's plan hook, so no
per-call figures). Prints a line per (matrix, dtype, k), then each variant over fused per half and k;
writes schedules.json.

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
from spla.backends.cuda import spmm as cuda_spmm
from spla.backends.cuda.cusparse import spmm_anchor
from spla.backends.cuda.spmm_launch import as_operand
from spla.bench import corpus
from spla.bench.spmv import time_rounds
from spla.bench.variants import register_spmm_variant

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "gpu-2026-12-07-session62"))
from slices import TOLERANCE, runner, skewed_families  # noqa: E402  (session 62's lab helpers)

KS = tuple(int(k) for k in os.environ.get("KS", "32 64").split())
# the windows need windows.patch (this folder) applied: the library dropped them after call 2
OPTIONS = {"fused-w64k": {"window_nnz": 2**16}, "fused-w256k": {"window_nnz": 2**18},
           **{f"fused-s{n}": {"segment_nnz": n} for n in (128, 256, 512)}}
for variant, options in OPTIONS.items():
    register_spmm_variant(variant, "fused", **options)
TILES = {"fused-tiles128B": 128, "fused-tiles256B": 256}  # column tiles of X of this many bytes a row
CALL2 = "fused-w64k fused-w256k fused-s256 fused-tiles128B fused-tiles256B"  # call 2's set; VARIANTS="..." picks
VARIANTS = tuple(os.environ.get("VARIANTS", CALL2).split())
KERNELS = ("fused", *VARIANTS, "cusparse")


def tiled(A, X, tile_bytes: int):
    """(run, result) of fused over X's columns in tiles of tile_bytes a row, one launch sequence a tile, each
    into an output of its own (the same bytes written as one output; the product's layout is the lab's
    concern only); None where k fits one tile. Each tile's X rows are tile_bytes wide, so a pass over A
    gathers from a fraction of X that L2 may hold."""
    width = tile_bytes // X.itemsize
    k = X.shape[1]
    if k <= width or k % width:
        return None
    launcher = cuda_spmm.bind(A, cuda_spmm.plan(A, width, "fused"))
    xs = [as_operand(X[:, c:c + width], allow_colmajor=False) for c in range(0, k, width)]
    outs = [cupy.empty((A.n_rows, width), X.dtype) for _ in xs]
    one, zero = A.dtype.type(1), A.dtype.type(0)

    def run():
        for x, o in zip(xs, outs):
            launcher.run(x, width, o, None, one, zero)

    return run, lambda: cupy.concatenate(outs, axis=1)


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
                    try:  # a lab variant that fails is reported and left out, not the run's end
                        made = (tiled(A, X, TILES[kernel]) if kernel in TILES
                                else (runner(A, X, Y, kernel), lambda Y=Y: Y))
                        if made is None:
                            continue
                        run, result = made
                        run()
                        errors[kernel] = float(cupy.linalg.norm(result() - want) / cupy.linalg.norm(want))
                    except Exception as error:  # noqa: BLE001
                        print(f"{name} {dtype} k={k} {kernel}: {type(error).__name__}: {error}", flush=True)
                        continue
                    if errors[kernel] <= TOLERANCE[dtype]:
                        runs[kernel] = run
                del want
                _, device = time_rounds(cupy, runs, rounds=3, budget_s=0.02)
                us = {kn: float(np.median(v)) for kn, v in device.items()}
                kept = spmm_anchor(A, X, Y)  # the CSR algorithm cusparse kept, and the others' times
                anchor = kept.name + "".join(f" {alg} {t * 1e6:.0f}" for alg, t in kept.timings.items()) + "".join(
                    f" {alg} left out" for alg in kept.left_out)
                records.append({"half": half, "matrix": name, "nnz": host.nnz, "shape": list(host.shape),
                                "dtype": dtype, "k": k, "errors": errors, "device_us": us, "anchor": kept.name,
                                "anchor_us": {alg: t * 1e6 for alg, t in kept.timings.items()},
                                "anchor_left_out": kept.left_out})
                get = {kn: us.get(kn, float("nan")) for kn in KERNELS}
                best = min(VARIANTS, key=lambda kn: get[kn] if get[kn] == get[kn] else float("inf"))
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
