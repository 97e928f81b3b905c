"""Session 57: spmm_dia_try.cu (this folder) beside the library's dia SpMM, in turns.

Every variant's product must equal the library kernel's bit for bit (the same sums in the same
order) before it is timed; the library's is checked against a float64 product first. Variants are
(BATCH, MIN_BLOCKS) of the try kernel. Prints one line per (matrix, dtype, k); writes dia_try.json.

    PYTHONPATH=. python3 docs/lab/gpu-2026-12-06-session57/dia_try.py OUT_FOLDER
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path

import cupy
import numpy as np

import spla
from spla import bench
from spla.backends.cuda import spmm_launch
from spla.backends.cuda.runtime import NVRTC_OPTIONS, grid_1d, template
from spla.bench import corpus
from spla.io import generators
from spla.kernel_files import kernel_dir
from spla.planning import dia
from spla.planning import palette as palettes

HERE = Path(__file__).parent
VARIANTS = ((1, 1), (4, 4), (8, 2), (5, 4))  # (BATCH, MIN_BLOCKS)
KS = (4, 8, 16)
MATRICES = [
    ("poisson2d-4096", lambda: generators.from_spec("gen:poisson2d:4096")),
    ("poisson3d-160", lambda: generators.from_spec("gen:poisson3d:160")),
    ("stencil27-30M", lambda: corpus.build("stencil27", 30_000_000)),
    ("banded-1M-20", lambda: generators.from_spec("gen:banded:1000000:20")),
]
TOLERANCE = {"float32": 1e-4, "float64": 1e-12}


@functools.cache
def try_kernel(value, vec, coded, batch, min_blocks):
    name = template("spla_spmm_dia_try", value, vec, coded, batch, min_blocks)
    module = cupy.RawModule(code=(HERE / "spmm_dia_try.cu").read_text(), name_expressions=[name],
                            options=(*NVRTC_OPTIONS, f"-DSPLA_PALETTE_VALUES={palettes.VALUES}", f"-I{kernel_dir()}"))
    return module.get_function(name)


def launch_try(A, X, out, variant):
    """The library's launch_dia with the try kernel (alpha 1, beta 0)."""
    value = np.dtype(A.dtype)
    found = dia.structure(A)
    coded = dia.palette(A, found)
    x = spmm_launch.as_operand(X, allow_colmajor=False)
    k = X.shape[1]
    vec = next(w for w in spmm_launch.dia_widths(value) if spmm_launch.vector_fits(A, w, x, k, out, None))
    kernel = try_kernel(value, vec, coded is not None, *variant)
    one, zero = A.dtype.type(1), A.dtype.type(0)
    kernel((grid_1d(A.n_rows * (k // vec), 256),), (256,), (
        np.int64(A.n_rows), np.int64(A.n_cols), np.int64(found.stride), np.int32(found.n_diagonals), found.offsets,
        *dia.kernel_slots(found, coded), x.array, np.int64(x.ld), np.int64(k), one, zero,
        out, np.int64(0), np.int32(0), out, np.int64(out.shape[1])))
    return out


def main(out_folder: Path) -> None:
    out_folder.mkdir(parents=True, exist_ok=True)
    records = []
    for name, make in MATRICES:
        host = make()
        for dtype in ("float32", "float64"):
            A = host.astype(dtype).to_device()
            A64 = host.astype(np.float64).to_device().to_cupyx()
            for k in KS:
                X = cupy.random.default_rng(k).uniform(-1, 1, (host.shape[1], k)).astype(dtype)
                want = A64 @ X.astype(np.float64)
                lib = spla.spmm(A, X, kernel="dia")
                error = float(cupy.linalg.norm(lib - want) / cupy.linalg.norm(want))
                assert error <= TOLERANCE[dtype], (name, dtype, k, error)
                out = cupy.empty_like(lib)
                runs = {"lib": lambda A=A, X=X, out=out: spla.spmm(A, X, kernel="dia", out=out)}
                same = {}
                for variant in VARIANTS:
                    out.fill(np.nan)
                    same[str(variant)] = bool(cupy.array_equal(launch_try(A, X, out, variant), lib))
                    if same[str(variant)]:
                        runs[str(variant)] = lambda A=A, X=X, out=out, v=variant: launch_try(A, X, out, v)
                del want
                samples = bench.time_in_turns(runs, rounds=3, budget_s=0.03, max_repeat=200, warmup=2)
                ms = {v: float(np.median(t)) for v, t in samples.items()}
                record = {"matrix": name, "dtype": dtype, "k": k, "ms": ms, "same_bits": same,
                          "gain": {v: ms["lib"] / t for v, t in ms.items()}}
                records.append(record)
                print(f"{name} {dtype} k={k}: lib {ms['lib']:.4f} ms | "
                      + " ".join(f"{v} {record['gain'][v]:.2f}x" for v in ms if v != "lib")
                      + ("" if all(same.values()) else f" | DIFFERENT BITS {same}"), flush=True)
                (out_folder / "dia_try.json").write_text(json.dumps({"environment": bench.environment(),
                                                                     "records": records}, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
