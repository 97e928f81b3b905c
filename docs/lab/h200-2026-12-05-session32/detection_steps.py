"""Where a dia detection's time goes on a fresh device copy (written in session 32 for the next
device call; predictions in README.md, "Next"). For each matrix, repeated on fresh copies: the free-memory
query right after the copy and again warm, the sample pass, the check pass (allocation of the
values included) and the whole detection.

    PYTHONPATH=. python3 detection_steps.py SOURCE... [--repeats 7]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", nargs="+")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)

    import cupy

    import spla
    from spla import csr_passes
    from spla.device import free_device_memory
    from spla.planning import dia

    def timed(f):
        cupy.cuda.Device().synchronize()
        began = time.perf_counter()
        result = f()
        cupy.cuda.Device().synchronize()
        return result, (time.perf_counter() - began) * 1e6

    for source in args.sources:
        host = spla.load(source)
        steps: dict[str, list[float]] = {}
        for _ in range(args.repeats + 1):  # the first compiles: dropped
            A = host.copy().to_device()
            A._cache.clear()
            times = {}
            _, times["memory query after the copy"] = timed(free_device_memory)
            _, times["memory query warm"] = timed(free_device_memory)
            sample = np.random.default_rng(0).integers(0, A.nnz, size=dia.SAMPLE)
            diagonals, times["sample pass"] = timed(lambda: csr_passes.sampled_diagonals(A, sample))
            candidates = dia._distinct(diagonals)
            if candidates.size <= dia.MAX_DIAGONALS:
                stride = dia._stride(A.n_rows)
                _, times["check pass with its values"] = timed(lambda: csr_passes.check_diagonals(
                    A, candidates, cupy.zeros(candidates.size * stride, dtype=A.dtype), A.nnz // dia.MAX_DIAGONALS))
            A._cache.clear()
            _, times["whole detection"] = timed(lambda: dia.structure(A))
            for name, us in times.items():
                steps.setdefault(name, []).append(us)
        print(f"{source} ({host.n_rows:,} rows, {host.nnz:,} nnz): " + ", ".join(
            f"{name} {np.median(us[1:]):.0f} us" for name, us in steps.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
