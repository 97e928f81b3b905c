"""Where the one-kernel palette detection's floor of about 0.6 ms goes (call 1, an H100): each step of
spla.planning.dia._palette timed alone with a synchronisation after it, the median of 30 runs, on one
stencil's dia values.

    PYTHONPATH=. python3 palette_steps.py [SOURCE] [--dtype float64]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", nargs="?", default="corpus:stencil7:2e6")
    parser.add_argument("--dtype", default="float64")
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args(argv)

    import cupy

    from spla import csr_passes
    from spla.bench import corpus
    from spla.device import to_host
    from spla.planning import dia

    A = corpus.load(args.source, dtype=np.float64).astype(args.dtype).to_device()
    values = dia.structure(A).values
    key_dtype = np.dtype(f"u{values.dtype.itemsize}")
    state: dict = {}

    def rng():
        state["positions"] = np.random.default_rng(0).integers(0, values.size, size=dia.SAMPLE)

    def gather():
        state["sampled"] = values.reshape(-1)[state["positions"]]

    def strided():  # a try: a strided view's copy, no positions drawn or sent
        state["strided"] = to_host(values.reshape(-1)[::max(1, values.size // dia.SAMPLE)])

    def read():
        state["host"] = to_host(state["sampled"])

    def distinct():
        state["keys"] = dia._distinct(np.asarray(state["host"]).view(key_dtype))

    def unique():  # a try: NumPy's own
        np.unique(np.asarray(state["host"]).view(key_dtype))

    def codes():
        state["coded"] = csr_passes.palette_codes(values, state["keys"][state["keys"] != 0], dia.PALETTE_MISSED)

    def table():
        keys = state["keys"][state["keys"] != 0]
        cupy.concatenate((cupy.zeros(1, dtype=values.dtype), cupy.asarray(keys).view(values.dtype)))

    def whole():
        A._cache.pop("dia-palette", None)
        dia.palette(A, dia.structure(A))

    def empty_sync():  # what a synchronisation alone costs
        pass

    dia.PALETTE_MIN_BYTES = 0
    steps = [rng, gather, read, distinct, unique, strided, codes, table, whole, empty_sync]
    for step in steps:
        step()  # warm
    cupy.cuda.runtime.deviceSynchronize()
    print(f"device {cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}; {args.source} {args.dtype}, "
          f"{values.size:,} slots", flush=True)
    for step in steps:
        times = []
        for _ in range(args.runs):
            cupy.cuda.runtime.deviceSynchronize()
            start = time.perf_counter()
            step()
            cupy.cuda.runtime.deviceSynchronize()
            times.append((time.perf_counter() - start) * 1e6)
        print(f"{step.__name__:10s} {statistics.median(times):8.1f} us (min {min(times):.1f})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
