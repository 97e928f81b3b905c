"""The CPU backend's SpMM (cpu_spmv.c's csr_spmm) against SciPy's ``S @ X``, on one thread and on
all, interleaved in rounds (``spla.bench.host_turns``), each result checked equal to SciPy's bit
for bit.

    PYTHONPATH=. python3 docs/lab/cpu-2026-12-04-session29/time_cpu_spmm.py --out DIR
"""

import argparse
import json
import os
from pathlib import Path

import numpy as np

import spla
from spla.backends import cpu
from spla.bench.timing import host_turns

SOURCES = ["gen:poisson2d:512", "gen:poisson2d:1024", "gen:random:200000:8", "gen:weblike"]


def on_threads(count, fn):
    def run():
        os.environ[cpu.THREADS_ENV] = str(count)
        return fn()
    return run


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    every = cpu.threads()
    rows = []
    for source in SOURCES:
        for dtype in (np.float32, np.float64):
            A = spla.load(source).astype(dtype).to_host()
            S = A.to_scipy()
            for k in (4, 8, 16):
                X = np.random.default_rng(0).standard_normal((A.n_cols, k)).astype(dtype)
                want = S @ X
                for count in (1, every):
                    assert np.array_equal(on_threads(count, lambda: cpu.csr_product(A, X))(), want), source
                t = host_turns({"scipy": lambda: S @ X,
                                "one": on_threads(1, lambda: cpu.csr_product(A, X)),
                                "all": on_threads(every, lambda: cpu.csr_product(A, X))}, rounds=5, budget_s=0.03)
                rows.append({"source": source, "dtype": np.dtype(dtype).name, "k": k, "nnz": A.nnz, **t})
                print(f"{source:<22} {np.dtype(dtype).name:<7} k {k:>2}  SciPy {t['scipy'] * 1e3:8.2f} ms  one thread "
                      f"{t['one'] * 1e3:8.2f} ms ({t['scipy'] / t['one']:.2f}x)  {every} threads {t['all'] * 1e3:8.2f} "
                      f"ms ({t['scipy'] / t['all']:.2f}x)", flush=True)
    os.environ.pop(cpu.THREADS_ENV, None)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "time_cpu_spmm.json").write_text(json.dumps({"threads": every, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
