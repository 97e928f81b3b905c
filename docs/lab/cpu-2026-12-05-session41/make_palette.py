"""Palette twins of corpus matrices for staged's palette A/B (next_call.sh's palette41f step): each
family's matrix with its stored values drawn from K distinct values (standard normals, seed 0),
written as DIR/FAMILY-NNZ-kK.npz (SciPy's format, float64 values).

    PYTHONPATH=. python3 make_palette.py DIR K corpus:random-uniform:2e7 ...
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from spla.bench import corpus


def main() -> None:
    out, k = Path(sys.argv[1]), int(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    values = rng.standard_normal(k)
    for source in sys.argv[3:]:
        _, family, nnz = source.split(":")
        S = corpus.build(family, int(float(nnz)), seed=0, dtype=np.float64).to_scipy()
        S.data[:] = rng.choice(values, S.nnz)
        path = out / f"{family}-{nnz}-k{k}.npz"
        sp.save_npz(path, S, compressed=False)
        print(f"{path}: {S.shape[0]:,} x {S.shape[1]:,}, {S.nnz:,} nonzeros, {k} values", flush=True)


if __name__ == "__main__":
    main()
