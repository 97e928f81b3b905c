"""The CPU SpMV (spla.backends.cpu.csr_product, every thread of this machine) over a matrix as it is
and with its columns relabelled by descending count (y = A x = B x[order]; B keeps each row's
entries in A's order, so the sums, and their bits, are A's), with the gather x[order] a call adds.
Three rounds interleaved, the fastest median of each. Beside each: x's size and where its most-read
columns lie (the share of nonzeros on the 32,768 most-read columns, and how many more 64-byte
lines they span than they would side by side).

    PYTHONPATH=. python3 docs/lab/cpu-2026-12-05-session33/relabel_cpu.py SOURCE... [--dtype float64]

SOURCE: corpus:FAMILY:NNZ, a gen: spec or a file.
"""

from __future__ import annotations

import argparse
import sys
import time
from functools import partial

import numpy as np

HOT = 32_768  # columns: 256 KB of float64, a core's L2 on this machine's EPYC and on most


def by_count(indices: np.ndarray, n_cols: int) -> tuple[np.ndarray, np.ndarray]:
    """(order, relabelled indices): column order[j] becomes j, the most-read first."""
    order = np.argsort(-np.bincount(indices, minlength=n_cols), kind="stable")
    label = np.empty(n_cols, dtype=indices.dtype)
    label[order] = np.arange(n_cols, dtype=indices.dtype)
    return order, label[indices]


def hot_columns(indices: np.ndarray, n_cols: int, itemsize: int) -> tuple[float, float]:
    """(share of nonzeros on the HOT most-read columns, lines they span over lines side by side)."""
    counts = np.bincount(indices, minlength=n_cols)
    hot = np.argsort(-counts, kind="stable")[:HOT]
    per_line = 64 // itemsize
    return float(counts[hot].sum() / max(indices.size, 1)), np.unique(hot // per_line).size / -(-hot.size // per_line)


def fastest(f, repeats: int = 7) -> float:
    f()
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        f()
        times.append(time.perf_counter() - began)
    return float(np.median(times)) * 1e3


def in_turns(calls: dict, rounds: int = 3) -> dict[str, float]:
    """Each call's fastest median over ``rounds`` rounds, the calls interleaved."""
    best: dict[str, float] = {}
    for _ in range(rounds):
        for name, call in calls.items():
            best[name] = min(best.get(name, np.inf), fastest(call))
    return best


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", nargs="+")
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float64")
    args = parser.parse_args(argv)

    import spla
    from spla.backends import cpu
    from spla.bench import corpus

    print(f"{'matrix':34} {'nnz':>11} {'x MB':>6} {'hot':>5} {'spread':>6} {'A ms':>8} {'B ms':>8} "
          f"{'gather':>7} {'A/B':>6} {'A/(B+g)':>8}")
    for source in args.sources:
        A = corpus.load(source).astype(args.dtype).to_host()
        order, relabelled = by_count(np.asarray(A.indices), A.n_cols)
        B = spla.CSRMatrix(A.data.copy(), relabelled, A.indptr.copy(), (A.n_rows, A.n_cols))
        x = np.random.default_rng(0).uniform(-1, 1, A.n_cols).astype(args.dtype)
        gathered = x[order]
        if not np.array_equal(cpu.csr_product(A, x), cpu.csr_product(B, gathered)):
            raise SystemExit(f"{source}: B x[order] differs from A x")
        share, spread = hot_columns(np.asarray(A.indices), A.n_cols, A.dtype.itemsize)
        best = in_turns({"A": partial(cpu.csr_product, A, x), "B": partial(cpu.csr_product, B, gathered),
                         "gather": partial(np.take, x, order)})
        print(f"{source[-34:]:34} {A.nnz:>11,} {x.nbytes / 2**20:>6.1f} {share:>5.2f} {spread:>6.1f} "
              f"{best['A']:>8.2f} {best['B']:>8.2f} {best['gather']:>7.2f} {best['A'] / best['B']:>6.2f} "
              f"{best['A'] / (best['B'] + best['gather']):>8.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
