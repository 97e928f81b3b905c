"""Fresh set 66 (session 55), written before any run of it: a broad held-out set for issue 17's large target as the
code stands, with blocked and its footprint rule, on the H200 the issue names. Fifteen matrices of 16-60M nonzeros
from the issue's held-out classes, parameters no earlier set used, a seed a name: 27- and 9-point stencils, two
R-MAT graphs (one whose float32 x sits just under auto's 36 MB cut), bimodal and multimodal rows, a band of random
width, a short-wide and a tall-skinny rectangle, rows mostly empty, a Kronecker product, a kNN window, a transposed
power law, local rows with far reads, and communities.

    python3 make_fresh_66.py DIR [NAME...]
"""

from __future__ import annotations

import sys
import zlib
from multiprocessing import Pool
from pathlib import Path

import numpy as np
import scipy.sparse as sp

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "h200-2026-12-04-session19"))
sys.path.insert(0, str(HERE.parent / "cpu-2026-12-06-session54"))
sys.path.insert(0, str(HERE.parents[2]))  # spla, for powerlaw_transposed
import make_fresh_65 as f65  # noqa: E402
import make_held_out_large as gen  # noqa: E402


def rows(lengths, n_cols):
    return lambda: gen._scattered_rows(lengths(), n_cols)


def choice(values, p, n):
    return lambda: gen.RNG.choice(values, size=n, p=p)


def from_65(family, *args):
    """A set 65 family (it takes its generator first and returns shape, rows, columns)."""
    def build():
        shape, r, c = family(gen.RNG, *args)
        A = sp.csr_matrix((np.ones(r.size), (r, c)), shape=shape)
        A.sum_duplicates()
        A.data = gen._values(A.nnz)
        return A
    return build


ALL_27 = [(a, b, c) for a in (-1, 0, 1) for b in (-1, 0, 1) for c in (-1, 0, 1)]
ALL_9 = [(a, b) for a in (-1, 0, 1) for b in (-1, 0, 1)]

SET_66 = {
    "stencil27-3d-128": lambda: gen._stencil((128, 128, 128), ALL_27),
    "stencil9-2d-2400": lambda: gen._stencil((2400, 2400), ALL_9),
    "rmat-23-5-graph500": lambda: gen.rmat(23, 5, (0.57, 0.19, 0.19, 0.05)),
    "rmat-22-9-mild": lambda: gen.rmat(22, 9, (0.45, 0.22, 0.22, 0.11)),
    "bimodal-3-60-2.5M": rows(choice([3, 60], [0.8, 0.2], 2_500_000), 2_500_000),
    "multimodal-1-8-200-3M": rows(choice([1, 8, 200], [0.5, 0.45, 0.05], 3_000_000), 3_000_000),
    "banded-random-6-50": lambda: gen.banded_random(1_400_000, 6, 50),
    "short-wide-1000x14M": lambda: gen.short_wide(1000, 14_000_000, 16_000),
    "tall-skinny-18Mx2500": rows(lambda: gen.RNG.integers(1, 5, 18_000_000), 2500),
    "empty65-16M-over-16M": rows(choice([0, 6], [0.65, 0.35], 16_000_000), 16_000_000),
    "kron-700x5000": lambda: gen.kron_random(700, 4, 5000, 3),
    "knn-8-window-150k": lambda: gen.knn_window(5_000_000, 8, 150_000),
    "powerlaw-transposed-9M-5": lambda: gen.powerlaw_transposed(9_000_000, 5),
    "local-far30-10M": from_65(f65.local_far, 10_000_000, 10_000_000, 4, 0.3, 2_000),
    "communities-14M-1M-80": from_65(f65.communities, 14_000_000, 3, 1_000_000, 0.8),
}


def make(item):
    name, out = item
    gen.RNG = np.random.default_rng(zlib.crc32(name.encode()))
    A = SET_66[name]().tocsr()
    A.sort_indices()
    sp.save_npz(out / f"{name}.npz", A, compressed=False)
    return f"{name}: {A.shape[0]:,} x {A.shape[1]:,}, {A.nnz:,} nnz"


if __name__ == "__main__":
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    names = sys.argv[2:] or list(SET_66)
    with Pool(min(8, len(names))) as pool:
        for line in pool.imap_unordered(make, [(n, out) for n in names]):
            print(line, flush=True)
