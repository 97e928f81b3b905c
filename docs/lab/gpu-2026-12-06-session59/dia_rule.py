"""Session 59: dia's SpMM as the library now launches it (the remainder of diagonals past the last full batch
as one batch where at least two remain: ``spmm_launch.dia_tail``) against session 57's kernel as it was committed
(``spmm_dia_s57.cu``, a copy), by device time alone, in turns.

Both take the arguments ``spmm_launch.launch_dia`` made (their signatures are the same); the bits are compared
before timing. The matrices measured in sessions 58-59 (the rule's fit) and four of other diagonal counts that
were not (its report): bands of 13 (5 + 5 + 3), 19 (3 x 5 + 4) and 25 (5 x 5: no remainder, unchanged) diagonals
and a smaller 3-D Poisson.

    PYTHONPATH=. python3 docs/lab/gpu-2026-12-06-session59/dia_rule.py OUT_FOLDER
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path

import cupy
import numpy as np

from spla import bench
from spla.backends.cuda import spmm_launch
from spla.backends.cuda.runtime import NVRTC_OPTIONS, template
from spla.backends.cuda.spmm_launch import Launch
from spla.backends.cuda.timing import queued_device_seconds
from spla.bench import corpus
from spla.io import generators
from spla.kernel_files import kernel_dir
from spla.planning import dia
from spla.planning import palette as palettes
from spla.planning.spmm import BLOCK

S57 = Path(__file__).parent / "spmm_dia_s57.cu"
KS = (2, 4, 8, 16)
MATRICES = [  # (name, make, fitted: measured in sessions 58-59 before the rule)
    ("poisson2d-4096", lambda: generators.from_spec("gen:poisson2d:4096"), True),
    ("poisson3d-160", lambda: generators.from_spec("gen:poisson3d:160"), True),
    ("banded-1M-20", lambda: generators.from_spec("gen:banded:1000000:20"), True),
    ("stencil27-30M", lambda: corpus.build("stencil27", 30_000_000), True),
    ("stencil9-20M", lambda: corpus.build("stencil9", 20_000_000), True),
    ("banded-fixed-20M", lambda: corpus.build("banded-fixed", 20_000_000), True),
    ("banded-2M-6", lambda: generators.from_spec("gen:banded:2000000:6"), False),
    ("banded-1M-9", lambda: generators.from_spec("gen:banded:1000000:9"), False),
    ("banded-1M-12", lambda: generators.from_spec("gen:banded:1000000:12"), False),
    ("poisson3d-120", lambda: generators.from_spec("gen:poisson3d:120"), False),
]


@functools.cache
def s57_kernel(value, vec, coded):
    name = template("spla_spmm_dia", value, vec, coded)
    module = cupy.RawModule(code=S57.read_text(), name_expressions=[name],
                            options=(*NVRTC_OPTIONS, f"-DSPLA_PALETTE_VALUES={palettes.VALUES}",
                                     f"-DSPLA_MAX_DIAGONALS={dia.MAX_DIAGONALS}", f"-I{kernel_dir()}"))
    return module.get_function(name)


def main(out_folder: Path) -> None:
    out_folder.mkdir(parents=True, exist_ok=True)
    records = []
    for name, make, fitted in MATRICES:
        host = make()
        for dtype in ("float32", "float64"):
            A = host.astype(dtype).to_device()
            diagonals = dia.structure(A).n_diagonals
            for k in KS:
                X = cupy.random.default_rng(k).uniform(-1, 1, (host.shape[1], k)).astype(dtype)
                x = spmm_launch.as_operand(X, allow_colmajor=False)
                outs = {label: cupy.empty((A.n_rows, k), dtype) for label in ("s57", "library")}
                made = spmm_launch.launch_dia(A, x, k, outs["library"], None, 1.0, 0.0)
                coded = dia.palette(A, dia.structure(A)) is not None
                vec = next(w for w in spmm_launch.dia_widths(A.dtype)
                           if spmm_launch.vector_fits(A, w, x, k, outs["library"], None))  # as launch_dia's
                old = s57_kernel(np.dtype(dtype), vec, coded)
                s57_args = list(made.args)  # the same, writing (and, with no Y, "reading") its own output
                s57_args[Launch.OUT_SLOT] = s57_args[Launch.Y_IN_SLOT] = outs["s57"]
                runs = {"library": lambda made=made: made.kernel(made.grid, (BLOCK,), made.args),
                        "s57": lambda old=old, made=made, args=tuple(s57_args): old(made.grid, (BLOCK,), args)}
                runs["s57"]()
                cupy.cuda.get_current_stream().synchronize()
                same = bool(cupy.array_equal(outs["s57"], outs["library"]))
                ms: dict = {label: [] for label in runs}
                for _ in range(3):
                    for label, run in runs.items():
                        ms[label].append(queued_device_seconds(run, 20) * 1e3)
                median = {label: float(np.median(v)) for label, v in ms.items()}
                gain = median["s57"] / median["library"]
                tail = spmm_launch.dia_tail(diagonals)
                records.append({"matrix": name, "fitted": fitted, "diagonals": diagonals, "tail": tail,
                                "dtype": dtype, "k": k, "same_bits": same, "device_ms": ms, "library_over_s57": gain})
                print(f"{'fit' if fitted else 'report'} {name} ({diagonals} diagonals, tail {tail}) {dtype} k={k}: "
                      f"s57 {median['s57']:.4f} ms, library {median['library']:.4f} ms | {gain:.3f}x"
                      + ("" if same else " | DIFFERENT BITS"), flush=True)
                (out_folder / "dia_rule.json").write_text(json.dumps({"environment": bench.environment(),
                                                                      "records": records}, indent=1))
    for fitted in (True, False):
        gains = [r["library_over_s57"] for r in records if r["fitted"] == fitted]
        if gains:
            print(f"{'fit' if fitted else 'report'}: geomean {np.exp(np.mean(np.log(gains))):.3f}x over s57, "
                  f"lowest {min(gains):.3f}, {len(gains)} runs, bits the same on all: "
                  f"{all(r['same_bits'] for r in records)}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
