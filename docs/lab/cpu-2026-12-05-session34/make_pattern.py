"""Pattern twins of corpus matrices for the uniform A/B (next_call.sh's uniform step): each family's
matrix with every stored value set to 1.0, written as DIR/FAMILY-NNZ.npz (SciPy's format, values
float32: 1.0 in either dtype).

    PYTHONPATH=. python3 make_pattern.py DIR corpus:knn-window:4e7 ... [FILE.npz ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from spla.bench import corpus


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for source in sys.argv[2:]:
        if source.endswith(".npz"):  # a set's matrix file (session 36)
            S, stem = sp.load_npz(source).tocsr().astype(np.float32), Path(source).stem
        else:
            _, family, nnz = source.split(":")
            S, stem = corpus.build(family, int(float(nnz)), seed=0, dtype=np.float32).to_scipy(), f"{family}-{nnz}"
        S.data[:] = 1
        path = out / f"{stem}.npz"
        sp.save_npz(path, S, compressed=False)
        print(f"{path}: {S.shape[0]:,} x {S.shape[1]:,}, {S.nnz:,} nonzeros", flush=True)


if __name__ == "__main__":
    main()
