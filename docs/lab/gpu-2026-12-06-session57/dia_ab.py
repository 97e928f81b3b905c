"""Session 57: the batched dia SpMM (library) against session 56's kernel by device time alone.

dia_try.py (call 1) timed the library kernel through spla.spmm and the try through a bare launch with
cupyx's benchmark, whose events also see the host's work before each launch: its gains were partly the
host's. Here both kernels are launched the same way and timed by ``queued_device_seconds`` (calls queued
behind a held stream: device time only), in turns, after their bits are compared.
spmm_dia_s56.cu is kernels/spmm_dia.cu as of e8ddbda.

    PYTHONPATH=. python3 docs/lab/gpu-2026-12-06-session57/dia_ab.py OUT_FOLDER
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
from spla.backends.cuda.runtime import NVRTC_OPTIONS, template
from spla.backends.cuda.timing import queued_device_seconds
from spla.bench import corpus
from spla.io import generators
from spla.kernel_files import kernel_dir
from spla.planning import dia
from spla.planning import palette as palettes

HERE = Path(__file__).parent
KS = (2, 4, 8, 16)
MATRICES = [
    ("poisson2d-4096", lambda: generators.from_spec("gen:poisson2d:4096")),
    ("poisson3d-160", lambda: generators.from_spec("gen:poisson3d:160")),
    ("banded-1M-20", lambda: generators.from_spec("gen:banded:1000000:20")),
    ("stencil27-30M", lambda: corpus.build("stencil27", 30_000_000)),
    ("stencil9-20M", lambda: corpus.build("stencil9", 20_000_000)),
    ("banded-fixed-20M", lambda: corpus.build("banded-fixed", 20_000_000)),
]


@functools.cache
def old_kernel(value, vec, coded):
    name = template("spla_spmm_dia", value, vec, coded)
    module = cupy.RawModule(code=(HERE / "spmm_dia_s56.cu").read_text(), name_expressions=[name],
                            options=(*NVRTC_OPTIONS, f"-DSPLA_PALETTE_VALUES={palettes.VALUES}", f"-I{kernel_dir()}"))
    return module.get_function(name)


def old_launch(A, X, out):
    """Session 56's launch_dia (alpha 1, beta 0) with its kernel."""
    found = dia.structure(A)
    coded = dia.palette(A, found)
    x = spmm_launch.as_operand(X, allow_colmajor=False)
    k = X.shape[1]
    vec = next(w for w in spmm_launch.dia_widths(A.dtype) if spmm_launch.vector_fits(A, w, x, k, out, None))
    one, zero = A.dtype.type(1), A.dtype.type(0)
    old_kernel(np.dtype(A.dtype), vec, coded is not None)(
        (spmm_launch.grid_1d(A.n_rows * (k // vec), 256),), (256,), (
            np.int64(A.n_rows), np.int64(A.n_cols), np.int64(found.stride), np.int32(found.n_diagonals),
            found.offsets, *dia.kernel_slots(found, coded), x.array, np.int64(x.ld), np.int64(k), one, zero,
            out, np.int64(0), np.int32(0), out, np.int64(out.shape[1])))
    return out


def main(out_folder: Path) -> None:
    out_folder.mkdir(parents=True, exist_ok=True)
    records = []
    for name, make in MATRICES:
        host = make()
        for dtype in ("float32", "float64"):
            A = host.astype(dtype).to_device()
            for k in KS:
                X = cupy.random.default_rng(k).uniform(-1, 1, (host.shape[1], k)).astype(dtype)
                new = spla.spmm(A, X, kernel="dia")
                out = cupy.empty_like(new)
                same = bool(cupy.array_equal(old_launch(A, X, out), new))
                runs = {"s56": lambda A=A, X=X, out=out: old_launch(A, X, out),
                        "s57": lambda A=A, X=X, out=out: spla.spmm(A, X, kernel="dia", out=out)}
                ms = {label: [] for label in runs}
                for _ in range(3):
                    for label, fn in runs.items():
                        ms[label].append(queued_device_seconds(fn, 20) * 1e3)
                median = {label: float(np.median(v)) for label, v in ms.items()}
                gain = median["s56"] / median["s57"]
                records.append({"matrix": name, "dtype": dtype, "k": k, "same_bits": same, "device_ms": ms,
                                "gain": gain})
                print(f"{name} {dtype} k={k}: s56 {median['s56']:.4f} ms, s57 {median['s57']:.4f} ms, "
                      f"s57 {gain:.2f}x" + ("" if same else " | DIFFERENT BITS"), flush=True)
                (out_folder / "dia_ab.json").write_text(json.dumps({"environment": bench.environment(),
                                                                    "records": records}, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
