"""The CPU SpMV's kernel for matrices of one value (csr_product.c's spmv_uniform: indices alone)
against the same matrix through the kernel that reads the values, and SciPy's call, on the corpus's
families with every value set to 1.0; 2 threads (the C kernels run from 1M nonzeros), ROUNDS
interleaved rounds (the two C kernels' order swapped every round, both writing one preallocated y, as a loop
with out= does), each result checked bit for bit
against SciPy's first. Printed: the best and the median of the rounds (this VM's calls vary up to 2x
from one call to the next, so a best of a few rounds is not a figure). Also the cost of the
first call's check (uniform_values) on a matrix of one value and on one of many.

    PYTHONPATH=. python3 time_uniform.py 16e6 FAMILY...
"""

from __future__ import annotations

import functools
import sys
import time

import numpy as np

from spla.backends import cpu
from spla.bench import corpus
from spla.csr import CSRMatrix

ROUNDS = 25


def main() -> None:
    cpu.UNIFORM_DTYPES = ("float32", "float64")  # both timed, whatever the library takes
    nnz, names = float(sys.argv[1]), sys.argv[2:]
    ratios: dict = {"float64": [], "float32": []}
    print(f"{'family':<16} {'dtype':<7} {'nnz':>11}  {'ms: scipy':>9} {'values':>6} {'uniform':>7} (best)  "
          f"{'values':>6} {'uniform':>7} (median)  {'uniform/values best':>19} {'median':>6} {'/scipy':>6}  "
          f"{'check ms (one value / many)':>27}")
    for name in names:
        base = corpus.build(name, int(nnz), seed=0, dtype=np.float64).to_scipy()
        for dtype in (np.float64, np.float32):
            S = base.astype(dtype)
            S.data[:] = 1
            uniform = CSRMatrix.from_scipy(S)
            values = CSRMatrix.from_scipy(S)
            values._cache["uniform-values"] = False  # the kernel that reads the values, on the same arrays
            mixed = CSRMatrix.from_scipy(base.astype(dtype))
            start = time.perf_counter()
            assert cpu.uniform_values(uniform)
            check_one = time.perf_counter() - start
            start = time.perf_counter()
            assert not cpu.uniform_values(mixed)
            check_many = time.perf_counter() - start
            x = np.random.default_rng(0).uniform(-1, 1, S.shape[1]).astype(dtype)
            want = S @ x
            out = np.empty(S.shape[0], dtype=dtype)  # both C kernels into one preallocated y (a fresh y a
            # call costs page faults that made run 2's two-thread times bimodal)
            runs = {"scipy": functools.partial(S.dot, x),
                    "values": functools.partial(cpu.csr_product, values, x, out),
                    "uniform": functools.partial(cpu.csr_product, uniform, x, out)}
            for run in runs.values():
                assert np.array_equal(run(), want)
            assert ("cpu-product-ranges", "spmv_uniform", 2) in uniform._cache
            assert ("cpu-product-ranges", "spmv", 2) in values._cache
            rounds: dict = {key: [] for key in runs}
            for r in range(ROUNDS):
                for key in ("scipy", *(("values", "uniform") if r % 2 else ("uniform", "values"))):
                    t = time.perf_counter()
                    runs[key]()
                    rounds[key].append((time.perf_counter() - t) * 1e3)
            (s, v, u), (_, vm, um) = ([f(rounds[k]) for k in ("scipy", "values", "uniform")] for f in (min, np.median))
            ratios[np.dtype(dtype).name].append((v / u, vm / um))
            print(f"{name:<16} {np.dtype(dtype).name:<7} {S.nnz:>11,}  {s:>9.2f} {v:>6.2f} {u:>7.2f}         "
                  f"{vm:>6.2f} {um:>7.2f}           {v / u:>18.2f}x {vm / um:>5.2f}x {s / u:>5.2f}x  "
                  f"{check_one * 1e3:>12.2f} / {check_many * 1e3:.3f}", flush=True)
    for dtype, pairs in ratios.items():
        if pairs:
            for which, got in (("best", [b for b, _ in pairs]), ("median", [m for _, m in pairs])):
                print(f"{dtype}: uniform over values by the {which} round, geomean "
                      f"{np.exp(np.mean(np.log(got))):.3f}x, lowest {min(got):.3f}x over {len(got)}")


if __name__ == "__main__":
    main()
