"""csr_product's threads taking chunks of rows in turn (P5's change, 4 chunks a thread, not taken)
against one range a thread (the code), both built here from csr_product's C kernel and cuts, with
SciPy's call beside, on this machine's threads. P5's report ran the change committed in
spla.backends.cpu; this copy of it gives the same calls. Each result is checked for SciPy's bits first; then rounds
of single calls, interleaved, and the median and 90th percentile of each.

    PYTHONPATH=. python3 cpu_chunks.py [--report] [--dtype float32 float64]

Without --report: the exploration's matrices (weblike and five corpus families); with it, the five
families P5 was written for, none of them in the exploration.
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time

import numpy as np

EXPLORE = ["gen:weblike", "corpus:stencil5:5e6", "corpus:stencil27:5e6", "corpus:random-uniform:5e6",
           "corpus:powerlaw-mid:5e6", "corpus:rmat-graph500:5e6"]
REPORT = ["corpus:stencil9:5e6", "corpus:banded-fixed:5e6", "corpus:knn-window:5e6", "corpus:bimodal:5e6",
          "corpus:short-random:5e6"]
CHUNKS_PER_THREAD = 4


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", action="store_true")
    parser.add_argument("--dtype", nargs="+", default=["float32"])
    parser.add_argument("--rounds", type=int, default=12)
    args = parser.parse_args(argv)

    from spla.backends import cpu
    from spla.bench import corpus

    ratios = []
    tails = 0
    for source in REPORT if args.report else EXPLORE:
        M = corpus.load(source)
        for dtype in args.dtype:
            A = M.astype(dtype)
            S = A.to_scipy()
            x = np.random.default_rng(0).uniform(-1, 1, A.n_cols).astype(dtype)
            out = np.empty(A.n_rows, dtype=dtype)
            parts = cpu._parts(A, 1, 1, cpu.threads())
            function, arrays, _ = cpu._row_ranges(A, parts, "spmv")
            halves = [int(c) for c in cpu._nnz_cuts(arrays[0], A.nnz, A.n_rows, parts)]
            pointers = [a.ctypes.data for a in (*arrays, x, out)]

            def one_range_a_thread(halves=halves, function=function, pointers=pointers, parts=parts, out=out):
                pending = [cpu._workers(cpu.threads() - 1).submit(function, halves[k], halves[k + 1], *pointers)
                           for k in range(1, parts)]
                function(halves[0], halves[1], *pointers)
                for future in pending:
                    future.result()
                return out

            cuts = [int(c) for c in cpu._nnz_cuts(arrays[0], A.nnz, A.n_rows, parts * CHUNKS_PER_THREAD)]

            def chunks_in_turn(cuts=cuts, function=function, pointers=pointers, parts=parts, out=out):
                chunks = itertools.count()

                def take_chunks():
                    for k in iter(chunks.__next__, None):
                        if k >= len(cuts) - 1:
                            return
                        function(cuts[k], cuts[k + 1], *pointers)

                pending = [cpu._workers(cpu.threads() - 1).submit(take_chunks) for _ in range(1, parts)]
                take_chunks()
                for future in pending:
                    future.result()
                return out

            runs = {"scipy": lambda S=S, x=x: S @ x, "ranges": one_range_a_thread, "chunks": chunks_in_turn}
            want = S @ x
            for name, run in runs.items():
                assert np.array_equal(run(), want), name
            times: dict[str, list] = {name: [] for name in runs}
            for _ in range(args.rounds):
                for name, run in runs.items():
                    for _ in range(4):
                        began = time.perf_counter()
                        run()
                        times[name].append((time.perf_counter() - began) * 1e3)
            median = {n: sorted(t)[len(t) // 2] for n, t in times.items()}
            p90 = {n: sorted(t)[9 * len(t) // 10] for n, t in times.items()}
            ratios.append(median["ranges"] / median["chunks"])
            tails += p90["chunks"] <= p90["ranges"]
            print(f"{source:28} {dtype:8} {parts} threads: " + "  ".join(
                f"{n} {median[n]:.2f}/{p90[n]:.2f} ms" for n in runs)
                + f" | ranges/chunks {ratios[-1]:.3f}", flush=True)
    print(f"geomean ranges/chunks {math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f}, lowest {min(ratios):.3f}; "
          f"chunks' 90th percentile no higher on {tails} of {len(ratios)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
