"""Session 61: fused past k = 16 in column tiles of 16, against adaptive (auto's choice there), warp,
subwarp and cuSPARSE SpMM, on every skewed family of the corpus (auto's `fused`/`adaptive` branch).

Each kernel is checked against a float64 product first, then timed in turns (3 rounds; device time and
per call from Python, both under spla.spmm(..., out=Y)); a kernel over 4x the fastest on its first
timing is reported and left out of the rounds. Fit half: the corpus's fit families; report half: its
report families. Prints one line per (matrix, dtype, k) and writes fused_wide.json to the folder given.

    [KS="8 16"] PYTHONPATH=. python3 docs/lab/gpu-2026-12-07-session61/fused_wide.py OUT_FOLDER [NNZ]
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
from spla.bench import corpus
from spla.bench.spmv import device_seconds, time_rounds
from spla.planning import spmm as spmm_planning

KS = tuple(int(k) for k in os.environ.get("KS", "24 32 64").split())  # KS="8 16": auto's fused side of the cut
KERNELS = ("fused", "adaptive", "warp", "subwarp", "cusparse")
TOLERANCE = {"float32": 1e-4, "float64": 1e-12}
SLOW = 4.0  # left out of the rounds past this many times the fastest first timing


def skewed_families() -> list:
    """(half, family) for every corpus family whose rows send auto's SpMM to fused/adaptive."""
    found = []
    for name in corpus.families():
        mean, longest = spmm_planning._row_stats(corpus.build(name, 200_000))
        if spmm_planning.choose_from_stats(mean, longest, 32) == "adaptive":
            found.append((corpus.FAMILIES[name].half, name))
    return found


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
                runs, errors, first = {}, {}, {}
                for kernel in KERNELS:
                    Y.fill(np.nan)
                    spla.spmm(A, X, out=Y, kernel=kernel)
                    errors[kernel] = float(cupy.linalg.norm(Y - want) / cupy.linalg.norm(want))
                    if errors[kernel] <= TOLERANCE[dtype]:
                        run = (lambda A=A, X=X, Y=Y, kernel=kernel: spla.spmm(A, X, out=Y, kernel=kernel))
                        first[kernel] = device_seconds(cupy, run, 2) * 1e6
                        runs[kernel] = run
                del want
                fastest = min(first.values())
                left_out = sorted(kn for kn, us in first.items() if us > SLOW * fastest)
                per_call, device = time_rounds(cupy, {kn: r for kn, r in runs.items() if kn not in left_out},
                                               rounds=3, budget_s=0.02)
                call_us = {kn: float(np.median(v)) for kn, v in per_call.items()}
                device_us = {kn: float(np.median(v)) for kn, v in device.items()}
                spla_kernels = {kn: t for kn, t in device_us.items() if kn != "cusparse"}
                best = min(spla_kernels, key=spla_kernels.get)
                record = {"half": half, "matrix": name, "nnz": host.nnz, "dtype": dtype, "k": k, "mean_row": mean,
                          "max_row": int(longest), "errors": errors, "first_device_us": first,
                          "left_out": left_out, "call_us": call_us, "device_us": device_us,
                          "auto": spmm_planning.choose_kernel(A, k), "best": best}
                records.append(record)
                us = {kn: device_us.get(kn, float("nan")) for kn in KERNELS}
                print(f"{half} {name} {dtype} k={k} (mean {mean:.1f}, max {int(longest)}): device us "
                      + " ".join(f"{kn} {t:.1f}" for kn, t in us.items())
                      + f" | fused/adaptive {us['adaptive'] / us['fused']:.3f}x | x cuSPARSE fused "
                      f"{us['cusparse'] / us['fused']:.2f} adaptive {us['cusparse'] / us['adaptive']:.2f}"
                      + f" | best {best}" + (f" | left out {','.join(left_out)}" if left_out else "")
                      + ("" if max(errors.values()) <= TOLERANCE[dtype] else f" | FAILED CHECK {errors}"), flush=True)
                (out / "fused_wide.json").write_text(json.dumps({"environment": bench.environment(),
                                                                 "records": records}, indent=1))
            A = None
        A64 = None
    for half in ("fit", "report"):
        rows = [r for r in records if r["half"] == half and {"fused", "adaptive"} <= r["device_us"].keys()]
        if rows:
            gains = [r["device_us"]["adaptive"] / r["device_us"]["fused"] for r in rows]
            print(f"{half}: fused over adaptive, device time: geomean {bench.geomean(gains):.3f}x, "
                  f"{min(gains):.3f}-{max(gains):.3f}x over {len(rows)} runs", flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(float(sys.argv[2])) if len(sys.argv) > 2 else 8_000_000)
