"""spla.pagerank on the CPU with the column relabelling (relabel.patch applied:
spla.backends.cpu.column_order) as the code decides it, and with it off (RELABEL_MIN_X_BYTES out of
reach): whole calls, decision and relabelling included, two rounds interleaved, the faster of each;
the ranks must be the same bits. tol 1e-13: the default tol stops a graph of millions of vertices
after one or two iterations.

    PYTHONPATH=. python3 docs/lab/cpu-2026-12-05-session33/pagerank_relabel.py SOURCE...
"""

from __future__ import annotations

import sys
import time

import numpy as np


def main(argv) -> int:
    import spla
    from spla.backends import cpu
    from spla.bench import corpus

    cut = cpu.RELABEL_MIN_X_BYTES
    print(f"{'matrix':34} {'nnz':>11} {'its':>4} {'off s':>7} {'on s':>7} {'off/on':>7} relabelled")
    for source in argv:
        A = corpus.load(source).to_scipy()
        best, ranks, relabelled = {}, {}, False
        for _ in range(2):
            for mode in ("off", "on"):
                cpu.RELABEL_MIN_X_BYTES = cut if mode == "on" else 1 << 62
                began = time.perf_counter()
                x, info = spla.pagerank(A, device="cpu", full_output=True, tol=1e-13, max_iter=300)
                best[mode] = min(best.get(mode, np.inf), time.perf_counter() - began)
                ranks[mode] = x
        cpu.RELABEL_MIN_X_BYTES = cut
        # whether the code relabelled: the same transition matrix, built again, asked directly
        P = spla.CSRMatrix.from_scipy(A.T.tocsr().astype(np.float64))
        relabelled = cpu.column_order(P) is not None
        same = np.array_equal(ranks["off"], ranks["on"])
        print(f"{source[-34:]:34} {A.nnz:>11,} {info['iterations']:>4} {best['off']:>7.2f} {best['on']:>7.2f} "
              f"{best['off'] / best['on']:>7.2f} {relabelled} (same bits: {same})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
