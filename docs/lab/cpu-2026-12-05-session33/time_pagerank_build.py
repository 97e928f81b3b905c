"""spla.pagerank's host build of P = (D^-1 A)^T (spla.graph.google_matrix_parts) as committed
(row scaling in place) against SciPy's diags(1 / out-weight) @ A it replaced, on fresh matrices,
three rounds interleaved, the fastest of each; the two P must be the same bits.

    PYTHONPATH=. python3 docs/lab/cpu-2026-12-05-session33/time_pagerank_build.py SOURCE...
"""

from __future__ import annotations

import sys
import time

import numpy as np
import scipy.sparse as sp


def diagonal_product(A) -> sp.csr_matrix:
    """The build before session 33: SciPy's general sparse product with a diagonal matrix."""
    S = A.to_scipy().astype(np.float64)
    out_weight = np.asarray(S.sum(axis=1)).ravel()
    scale = np.divide(1.0, out_weight, out=np.zeros_like(out_weight), where=out_weight != 0)
    return (sp.diags(scale) @ S).T.tocsr()


def main(argv) -> int:
    import spla
    from spla.bench import corpus
    from spla.graph import google_matrix_parts

    print(f"{'matrix':34} {'nnz':>11} {'diags @ A s':>12} {'in place s':>11} {'speed-up':>9}")
    for source in argv:
        S = corpus.load(source).to_scipy()
        best: dict[str, float] = {}
        built = {}
        for _ in range(3):
            for name in ("diags", "in place"):
                A = spla.CSRMatrix.from_scipy(S)  # a fresh cache
                began = time.perf_counter()
                built[name] = diagonal_product(A) if name == "diags" else google_matrix_parts(A, np.float64)[0]
                best[name] = min(best.get(name, np.inf), time.perf_counter() - began)
        ours = built["in place"].to_scipy()
        same = all(np.array_equal(getattr(ours, k), getattr(built["diags"], k)) for k in ("indptr", "indices", "data"))
        print(f"{source[-34:]:34} {S.nnz:>11,} {best['diags']:>12.2f} {best['in place']:>11.2f} "
              f"{best['diags'] / best['in place']:>9.2f} (same bits: {same})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
