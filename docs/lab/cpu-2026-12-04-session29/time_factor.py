"""ic0 and ilu0 set-up on the CPU with the compiled elimination (SPLA_NATIVE=on) and with the NumPy
schedule (off): best of 3 after a warm-up, default (colour) ordering.

    PYTHONPATH=. python3 docs/lab/cpu-2026-12-04-session29/time_factor.py gen:poisson2d:1024 \
        shared-matrices/bcsstk13.mtx.gz gen:poisson3d:64
"""

import os
import sys
import time

import spla
from spla.linalg import ic0, ilu0


def best(fn, repeats=3):
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


for source in sys.argv[1:]:
    A = spla.load(source)
    line = f"{source:<34} n {A.n_rows:>9,} nnz {A.nnz:>10,}"
    for mode in ("on", "off"):
        os.environ["SPLA_NATIVE"] = mode
        line += f" | native {mode}: ic0 {best(lambda: ic0(A)) * 1e3:8.1f} ms, ilu0 {best(lambda: ilu0(A)) * 1e3:8.1f} ms"
    print(line, flush=True)
