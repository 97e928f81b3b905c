"""What S1 would add to a first auto call: the time of dia's and band's detection passes
(`applies`, cached on the matrix afterwards) on matrices that S1 would newly examine, on the
device when CuPy sees one, else on the CPU. Each repeat copies the host matrix afresh, so no cache
answers. (Until session 31 a repeat called ``host.to_device()``, which returns the one cached device
copy: every repeat after the first read the cached result, and the median of 5 was 0.00 ms.)

    PYTHONPATH=. python3 time_detection.py SOURCE... [--repeats 5]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", nargs="+", help="matrix files or gen: specs")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)

    import spla
    from spla.device import resolve_device
    from spla.planning import band, dia
    from spla.planning.stats import row_stats

    device = resolve_device("auto")
    sync = (lambda: __import__("cupy").cuda.Device().synchronize()) if device == "gpu" else (lambda: None)
    for source in args.sources:
        host = spla.load(source)
        times = {"dia": [], "band": []}
        found = {}
        for _ in range(args.repeats):
            A = host.copy().to_device() if device == "gpu" else host.copy()
            stats = row_stats(A)
            for name, module in (("dia", dia), ("band", band)):
                sync()
                began = time.perf_counter()
                found[name] = module.applies(A, stats)
                sync()
                times[name].append((time.perf_counter() - began) * 1e3)
        print(f"{source} ({device}, {host.n_rows:,} rows, {host.nnz:,} nnz): "
              + ", ".join(f"{name} {'found' if found[name] else 'none'} in {np.median(ms):.2f} ms (median of "
                          f"{len(ms)}, first {ms[0]:.2f})" for name, ms in times.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
