"""What dia's palette costs once a matrix on the GPU: the detection of the diagonals
(spla.planning.dia.structure) and then of the palette (dia.palette), each on a fresh device copy,
beside one dia call (device time), so the cost reads as a count of calls.

    PYTHONPATH=. python3 palette_cost.py SOURCE... [--dtype float32 float64]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="+", help="files, gen: specs or corpus:FAMILY:NNZ")
    parser.add_argument("--dtype", nargs="+", default=["float32", "float64"])
    args = parser.parse_args(argv)

    import cupy

    import spla
    from spla.bench import corpus
    from spla.bench.spmv import device_seconds
    from spla.planning import dia

    def timed(call):
        cupy.cuda.runtime.deviceSynchronize()
        start = time.perf_counter()
        result = call()
        cupy.cuda.runtime.deviceSynchronize()
        return result, (time.perf_counter() - start) * 1e3

    dia.PALETTE_MIN_BYTES = {"float32": 0, "float64": 0}  # the detection's cost at every size, as if taken
    for source in args.sources:
        host = corpus.load(source, dtype=np.float64)
        for dtype in args.dtype:
            figures = []
            for _ in range(2):  # the first also compiles and warms the pools
                A = host.astype(dtype, copy=True).to_device()
                found, structure_ms = timed(lambda A=A: dia.structure(A))
                assert isinstance(found, dia.Structure), found
                coded, palette_ms = timed(lambda A=A, found=found: dia.palette(A, found))
                figures.append((structure_ms, palette_ms))
            x = cupy.ones(A.n_cols, dtype=dtype)
            out = cupy.empty(A.n_rows, dtype=dtype)
            spla.spmv(A, x, kernel="dia", out=out)  # binds (and synchronises) before the timing
            call_us = device_seconds(cupy, lambda A=A, x=x, out=out: spla.spmv(A, x, kernel="dia", out=out), 20) * 1e6
            structure_ms, palette_ms = figures[-1]
            print(f"{source} {dtype} nnz {A.nnz:,}: structure {structure_ms:.2f} ms, palette {palette_ms:.2f} ms "
                  f"({'none' if coded is None else f'{coded.n_values} values'}); a dia call {call_us:.1f} us: "
                  f"palette = {palette_ms * 1e3 / call_us:.0f} calls", flush=True)
            del A, found, coded
    return 0


if __name__ == "__main__":
    sys.exit(main())
