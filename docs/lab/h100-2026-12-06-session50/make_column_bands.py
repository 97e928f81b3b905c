"""Column bands of short-wide matrices, for the next session (written in session 50, no run yet): a test of the
lockstep-sweep hypothesis (README, "Next") with today's kernels. Row r's entries in columns [p * W, (p + 1) * W)
become row p * R + r of a matrix of R * P rows (P = ceil(columns / W)), so staged's concurrent tiles, which follow
CSR order, gather from one band of x at a time, as vector's warps do on rows of one length. y is the sum over p of
that matrix's rows p * R + r (R * P values, a small second pass not timed here).

    python3 make_column_bands.py OUT_DIR WIDTH FILE.npz...
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp


def bands(A: sp.csr_matrix, width: int) -> sp.csr_matrix:
    """A's entries regrouped by column band, band-major: row p * R + r holds row r's band p."""
    A = A.tocoo()
    n_rows, n_cols = A.shape
    n_bands = -(-n_cols // width)
    rows = (A.col // width).astype(np.int64) * n_rows + A.row
    return sp.csr_matrix((A.data, (rows, A.col)), shape=(n_rows * n_bands, n_cols))


def main(argv) -> int:
    out, width = Path(argv[0]), int(float(argv[1]))
    out.mkdir(parents=True, exist_ok=True)
    for name in argv[2:]:
        A = sp.load_npz(name).tocsr()
        B = bands(A, width)
        B.sort_indices()
        target = out / f"{Path(name).stem}-bands-{width // 1000}k.npz"
        sp.save_npz(target, B, compressed=False)
        # the check that the split is exact: y is the band-sum of B @ x
        x = np.random.default_rng(0).uniform(-1, 1, A.shape[1])
        y = (B @ x).reshape(-1, A.shape[0]).sum(axis=0)
        assert np.allclose(y, A @ x, rtol=1e-10, atol=1e-8), name
        print(f"{target.name}: {B.shape[0]:,} x {B.shape[1]:,}, {B.nnz:,} nnz", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
