"""Session 58: dia's SpMM kernels by device time alone, in turns: session 56's (unbatched, ``s56``), the
committed batched kernel (session 57, ``s57``) and two tries in this folder for the remainder of diagonals
past the last full batch: a batch of its own size (``tail``, spmm_dia_tail.cu) and a full batch whose terms
past the last diagonal reload it with a zero value (``masked``, spmm_dia_masked.cu).

Each is compiled from its file and launched the same way (a bare RawKernel call with the library's
arguments), timed by ``queued_device_seconds`` (calls queued behind a held stream: no host time), after
its bits are compared with ``spla.spmm(kernel="dia")``'s. Ratios are over s57.

    PYTHONPATH=. python3 docs/lab/gpu-2026-12-06-session58/dia_ab.py OUT_FOLDER [LABEL ...]   # call 1: s56 s57 tail
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
KERNEL_FILES = {"s56": HERE.parent / "gpu-2026-12-06-session57" / "spmm_dia_s56.cu",
                "s57": kernel_dir() / "spmm_dia.cu",
                "tail": HERE / "spmm_dia_tail.cu",
                "masked": HERE / "spmm_dia_masked.cu"}
FILES = {label: KERNEL_FILES[label] for label in (sys.argv[2:] or ["s56", "s57", "tail"])}
assert "s57" in FILES, "ratios are over the committed kernel"
KS = (2, 4, 8, 16)
# diagonals: 5 (one batch, no remainder), 7 (5 + 2), 9 (5 + 4), 27 (5 x 5 + 2), 41 (8 x 5 + 1)
MATRICES = [
    ("poisson2d-4096", lambda: generators.from_spec("gen:poisson2d:4096")),
    ("poisson3d-160", lambda: generators.from_spec("gen:poisson3d:160")),
    ("banded-1M-20", lambda: generators.from_spec("gen:banded:1000000:20")),
    ("stencil27-30M", lambda: corpus.build("stencil27", 30_000_000)),
    ("stencil9-20M", lambda: corpus.build("stencil9", 20_000_000)),
    ("banded-fixed-20M", lambda: corpus.build("banded-fixed", 20_000_000)),
]


@functools.cache
def compiled(label, value, vec, coded):
    name = template("spla_spmm_dia", value, vec, coded)
    module = cupy.RawModule(code=FILES[label].read_text(), name_expressions=[name],
                            options=(*NVRTC_OPTIONS, f"-DSPLA_PALETTE_VALUES={palettes.VALUES}",
                                     f"-DSPLA_MAX_DIAGONALS={dia.MAX_DIAGONALS}", f"-I{kernel_dir()}"))
    return module.get_function(name)


def launch(label, A, X, out):
    """The library's launch_dia (alpha 1, beta 0) with ``label``'s kernel."""
    found = dia.structure(A)
    coded = dia.palette(A, found)
    x = spmm_launch.as_operand(X, allow_colmajor=False)
    k = X.shape[1]
    vec = next(w for w in spmm_launch.dia_widths(A.dtype) if spmm_launch.vector_fits(A, w, x, k, out, None))
    one, zero = A.dtype.type(1), A.dtype.type(0)
    compiled(label, np.dtype(A.dtype), vec, coded is not None)(
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
            diagonals = dia.structure(A).n_diagonals
            for k in KS:
                X = cupy.random.default_rng(k).uniform(-1, 1, (host.shape[1], k)).astype(dtype)
                want = spla.spmm(A, X, kernel="dia")
                outs = {label: cupy.empty_like(want) for label in FILES}
                same = {label: bool(cupy.array_equal(launch(label, A, X, outs[label]), want)) for label in FILES}
                ms: dict = {label: [] for label in FILES}
                for _ in range(3):
                    for label in FILES:
                        ms[label].append(queued_device_seconds(
                            lambda label=label, A=A, X=X, outs=outs: launch(label, A, X, outs[label]), 20) * 1e3)
                median = {label: float(np.median(v)) for label, v in ms.items()}
                over = {label: median["s57"] / median[label] for label in FILES if label != "s57"}
                records.append({"matrix": name, "diagonals": diagonals, "dtype": dtype, "k": k, "same_bits": same,
                                "device_ms": ms, "speed_over_s57": over})
                print(f"{name} ({diagonals} diagonals) {dtype} k={k}: "
                      + ", ".join(f"{label} {median[label]:.4f} ms" for label in FILES) + " | "
                      + ", ".join(f"{label} {x:.3f}x" for label, x in over.items())
                      + ("" if all(same.values()) else f" | DIFFERENT BITS {same}"), flush=True)
                (out_folder / "dia_ab.json").write_text(json.dumps({"environment": bench.environment(),
                                                                    "records": records}, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
