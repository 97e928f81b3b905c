"""Session 19's large held-out matrices (issue 17's "large" target: 10M-200M nonzeros), written
as SciPy .npz files into a folder, for ``bench_corpus.py --scale none --sources``.

Shapes of the issue's held-out classes, none with the parameters of a corpus family or an earlier
held-out run: a 3-D 19-point and a 2-D 13-point stencil, an R-MAT graph with other probabilities
(relabelled), bimodal rows of 4 and 96 scattered entries, rows each one contiguous run of random
width, a short-wide and a tall-skinny rectangle, and a web-like power law.

    python3 make_held_out_large.py DIR [NAME ...]

Without names it writes call 2's set (MATRICES); call 3's (SECOND), made after call 2's
tall-skinny matrix moved the rule, checks the new short-tiny class on rows of 2-6 entries
(local and scattered columns, x in cache or not) and adds three more large graphs; call 4's
(THIRD), made after call 3's bimodal-2-40 moved large irregular rows of any length to staged,
checks both changes again on shapes neither call saw; call 5's (FOURTH), made after call 4 moved
tiny_mean from 4 to 7, checks the rule as committed on shapes none of the earlier calls saw;
call 6's (FIFTH) was written and run before the rule that followed call 5 was chosen, and its
results were not read until that rule was fixed: regular rows over large and small x; call 7's
(SIXTH), made after the regular-large class was chosen on calls 2-6, reports the rule on shapes
none of them saw; call 8's (SEVENTH), made after call 7 moved the x size from 64 KB to 256 KB,
was reported in turn; call 9's (EIGHTH), made after call 8 split the class by x (segmented from
96 KB, staged from 1 MB), reports the rule as it stands; so does call 10's (NINTH), made after it
with no change to the rule.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

RNG = np.random.default_rng(1912)


def _values(nnz: int) -> np.ndarray:
    return RNG.uniform(0.5, 1.5, nnz)


def _stencil(shape: tuple, offsets: list) -> sp.csr_matrix:
    """Rows are grid points; a row has the points at ``offsets`` that lie on the grid."""
    n = int(np.prod(shape))
    idx = np.arange(n, dtype=np.int64)
    coords = np.unravel_index(idx, shape)
    strides = np.array([int(np.prod(shape[d + 1:])) for d in range(len(shape))], dtype=np.int64)
    rows, cols = [], []
    for off in offsets:
        ok = np.ones(n, dtype=bool)
        for d, o in enumerate(off):
            ok &= (coords[d] + o >= 0) & (coords[d] + o < shape[d])
        r = idx[ok]
        rows.append(r)
        cols.append(r + int(np.dot(off, strides)))
    r, c = np.concatenate(rows), np.concatenate(cols)
    return sp.csr_matrix((_values(r.size), (r, c)), shape=(n, n))


def stencil19_3d(n: int = 150):
    offs = [(a, b, c) for a in (-1, 0, 1) for b in (-1, 0, 1) for c in (-1, 0, 1) if abs(a) + abs(b) + abs(c) <= 2]
    return _stencil((n, n, n), offs)


def stencil13_2d(n: int = 2400):
    offs = [(a, b) for a in range(-2, 3) for b in range(-2, 3) if abs(a) + abs(b) <= 2]
    return _stencil((n, n), offs)


def rmat(scale: int = 21, edge_factor: int = 24, probs=(0.70, 0.12, 0.12, 0.06)):
    n, m = 1 << scale, edge_factor << scale
    src = np.zeros(m, dtype=np.int64)
    dst = np.zeros(m, dtype=np.int64)
    cum = np.cumsum(probs)
    for bit in range(scale):
        u = RNG.random(m)
        quad = np.searchsorted(cum, u, side="right")
        src |= (quad >> 1).astype(np.int64) << bit
        dst |= (quad & 1).astype(np.int64) << bit
    perm = RNG.permutation(n)
    A = sp.csr_matrix((np.ones(m), (perm[src], perm[dst])), shape=(n, n))
    A.sum_duplicates()
    A.data = _values(A.nnz)
    return A


def _scattered_rows(lengths: np.ndarray, n_cols: int) -> sp.csr_matrix:
    """Rows of the given lengths, each of distinct uniformly random columns, sorted."""
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    cols = RNG.integers(0, n_cols, int(indptr[-1]), dtype=np.int64)
    A = sp.csr_matrix((np.ones(cols.size), cols, indptr), shape=(lengths.size, n_cols))
    A.sum_duplicates()  # sorts and folds the rare repeated column
    A.data = _values(A.nnz)
    return A


def bimodal(n: int = 2_000_000):
    lengths = np.where(RNG.random(n) < 0.75, 4, 96)
    return _scattered_rows(lengths, n)


def short_wide(rows: int = 1500, cols: int = 16_000_000, per_row: int = 12_000):
    return _scattered_rows(np.full(rows, per_row), cols)


def tall_skinny(rows: int = 24_000_000, cols: int = 2000):
    return _scattered_rows(RNG.integers(2, 4, rows), cols)


def banded_random(n: int = 2_500_000, lo: int = 4, hi: int = 44):
    """Row i: the columns of one run of random width w in [lo, hi], centred on i (clipped)."""
    w = RNG.integers(lo, hi + 1, n)
    first = np.clip(np.arange(n) - w // 2, 0, None)
    last = np.minimum(first + w, n)
    lengths = last - first
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    cols = np.arange(int(indptr[-1]), dtype=np.int64) - np.repeat(indptr[:-1] - first, lengths)
    return sp.csr_matrix((_values(cols.size), cols, indptr), shape=(n, n))


def road_like(n: int = 4000, keep: float = 0.55):
    """A road-network-like graph: an n x n grid, each grid edge kept with probability ``keep``,
    both directions, vertices in grid order (columns close to the row: x streams)."""
    v = np.arange(n * n, dtype=np.int64).reshape(n, n)
    pairs = [(v[:, :-1].ravel(), v[:, 1:].ravel()), (v[:-1, :].ravel(), v[1:, :].ravel())]
    src = np.concatenate([a for a, _ in pairs])
    dst = np.concatenate([b for _, b in pairs])
    kept = RNG.random(src.size) < keep
    src, dst = src[kept], dst[kept]
    r, c = np.concatenate([src, dst]), np.concatenate([dst, src])
    return sp.csr_matrix((_values(r.size), (r, c)), shape=(n * n, n * n))


def tiny_scattered(n: int = 10_000_000, lo: int = 1, hi: int = 4):
    return _scattered_rows(RNG.integers(lo, hi + 1, n), n)


def four_a_row(n: int = 6_000_000, cols: int = 1_000_000):
    return _scattered_rows(np.full(n, 4), cols)


def six_a_row_narrow(n: int = 5_000_000, cols: int = 3000):
    return _scattered_rows(RNG.integers(4, 9, n), cols)


def geometric_rows(n: int = 8_000_000, p: float = 0.35, cap: int = 8):
    return _scattered_rows(np.minimum(RNG.geometric(p, n), cap), n)


def tiny_small(n: int = 300_000):
    return _scattered_rows(RNG.integers(2, 4, n), n)


def rmat_mild(scale: int = 22, edge_factor: int = 10):
    return rmat(scale, edge_factor, probs=(0.45, 0.22, 0.22, 0.11))


def bimodal_2_40(n: int = 3_000_000):
    return _scattered_rows(np.where(RNG.random(n) < 0.6, 2, 40), n)


SECOND = {"road-like-4000": road_like, "tiny-scattered-1-4": tiny_scattered, "four-a-row-1M-cols": four_a_row,
          "six-a-row-3000-cols": six_a_row_narrow, "geometric-rows-cap8": geometric_rows,
          "tiny-small-300k": tiny_small, "rmat-45-22-22-11": rmat_mild, "bimodal-2-40": bimodal_2_40}

def _relabel(A: sp.csr_matrix) -> sp.csr_matrix:
    perm = RNG.permutation(A.shape[0])
    return A[perm][:, perm].tocsr()


def bimodal_1_24(n: int = 4_000_000):
    return _scattered_rows(np.where(RNG.random(n) < 0.7, 1, 24), n)


def trimodal(n: int = 2_000_000):
    return _scattered_rows(RNG.choice([2, 12, 48], size=n, p=[0.5, 0.35, 0.15]), n)


def empty_half(n: int = 6_000_000):
    return _scattered_rows(np.where(RNG.random(n) < 0.55, 0, 10), n)


def road_permuted(n: int = 3000):
    return _relabel(road_like(n))


def tiny_local(n: int = 20_000_000, reach: int = 50):
    """Rows of 1-3 entries within ``reach`` columns of the diagonal (x streams)."""
    lengths = RNG.integers(1, 4, n)
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    rows = np.repeat(np.arange(n, dtype=np.int64), lengths)
    position = np.arange(int(indptr[-1])) - np.repeat(indptr[:-1], lengths)
    cols = np.clip(rows - reach + position * (2 * reach // 3) + RNG.integers(0, 2 * reach // 3, rows.size), 0, n - 1)
    A = sp.csr_matrix((np.ones(cols.size), cols, indptr), shape=(n, n))
    A.sum_duplicates()
    A.data = _values(A.nnz)
    return A


def five_a_row_narrow(n: int = 10_000_000, cols: int = 500):
    return _scattered_rows(np.full(n, 5), cols)


def rmat_55(scale: int = 21, edge_factor: int = 16):
    return rmat(scale, edge_factor, probs=(0.55, 0.20, 0.20, 0.05))


def tiny_1m(n: int = 1_000_000):
    return _scattered_rows(RNG.integers(2, 4, n), n)


def bimodal_small(n: int = 200_000):
    return _scattered_rows(np.where(RNG.random(n) < 0.6, 2, 40), n)


THIRD = {"bimodal-1-24": bimodal_1_24, "trimodal-2-12-48": trimodal, "empty-half-10": empty_half,
         "road-permuted-3000": road_permuted, "tiny-local-20M": tiny_local, "five-a-row-500-cols": five_a_row_narrow,
         "rmat-55-20-20-5": rmat_55, "tiny-1M": tiny_1m, "bimodal-2-40-small": bimodal_small}

def rows_5_8_narrow(n: int = 8_000_000, cols: int = 1000):
    return _scattered_rows(RNG.integers(5, 9, n), cols)


def rows_6_10_narrow(n: int = 5_000_000, cols: int = 800):
    return _scattered_rows(RNG.integers(6, 11, n), cols)


def tiny_with_16s(n: int = 12_000_000):
    return _scattered_rows(np.where(RNG.random(n) < 0.02, 16, RNG.integers(1, 5, n)), n)


def powerlaw_transposed(n: int = 4_000_000, avg: int = 8):
    from spla.io import generators

    A = generators.from_spec(f"gen:powerlaw:{n}:{avg}:{min(n, 100_000)}:seed=71").to_scipy()
    return A.T.tocsr()


def bimodal_3_30_mid(n: int = 200_000):
    return _scattered_rows(np.where(RNG.random(n) < 0.55, 3, 30), n)


def sparse_mix_0_1_30(n: int = 4_000_000):
    return _scattered_rows(RNG.choice([0, 1, 30], size=n, p=[0.3, 0.5, 0.2]), n)


def fem_thinned(n: int = 130, keep: float = 0.7):
    offs = [(a, b, c) for a in (-1, 0, 1) for b in (-1, 0, 1) for c in (-1, 0, 1)]
    A = _stencil((n, n, n), offs).tocoo()
    kept = (RNG.random(A.nnz) < keep) | (A.row == A.col)
    return sp.csr_matrix((A.data[kept], (A.row[kept], A.col[kept])), shape=A.shape)


def circuit_like(n: int = 3_000_000, dense_rows: int = 60, dense_len: int = 20_000):
    lengths = RNG.integers(3, 6, n)
    lengths[RNG.choice(n, dense_rows, replace=False)] = dense_len
    return _scattered_rows(lengths, n)


def lp_rectangle(rows: int = 1_000_000, cols: int = 10_000_000):
    return _scattered_rows(RNG.integers(6, 19, rows), cols)


FOURTH = {"rows-5-8-1000-cols": rows_5_8_narrow, "rows-6-10-800-cols": rows_6_10_narrow,
          "tiny-with-16s": tiny_with_16s, "powerlaw-transposed": powerlaw_transposed,
          "bimodal-3-30-mid": bimodal_3_30_mid, "mix-0-1-30": sparse_mix_0_1_30, "fem27-thinned": fem_thinned,
          "circuit-like": circuit_like, "lp-rectangle-1Mx10M": lp_rectangle}

def random_12_wide(rows: int = 3_000_000, cols: int = 6_000_000):
    return _scattered_rows(np.full(rows, 12), cols)


def rows_10_30(rows: int = 1_500_000, cols: int = 2_000_000):
    return _scattered_rows(RNG.integers(10, 31, rows), cols)


def twenty_over_100k(rows: int = 2_000_000, cols: int = 100_000):
    return _scattered_rows(np.full(rows, 20), cols)


def rows_3_9_edge(rows: int = 8_000_000, cols: int = 1_500_000):
    return _scattered_rows(RNG.integers(3, 10, rows), cols)


def knn_window(n: int = 4_000_000, k: int = 10, window: int = 5000):
    """k distinct columns a row within +-window of the row (a k-nearest-neighbour graph's locality)."""
    rows = np.repeat(np.arange(n, dtype=np.int64), k)
    slot = np.tile(np.arange(k, dtype=np.int64), n)
    width = 2 * window // k
    cols = np.clip(rows - window + slot * width + RNG.integers(0, width, rows.size), 0, n - 1)
    A = sp.csr_matrix((np.ones(cols.size), (rows, cols)), shape=(n, n))
    A.sum_duplicates()
    A.data = _values(A.nnz)
    return A


def rmat_transposed(scale: int = 21, edge_factor: int = 12):
    return rmat(scale, edge_factor, probs=(0.6, 0.2, 0.15, 0.05)).T.tocsr()


def tiny_over_200k(rows: int = 10_000_000, cols: int = 200_000):
    return _scattered_rows(RNG.integers(2, 5, rows), cols)


FIFTH = {"random-12-over-6M": random_12_wide, "rows-10-30-over-2M": rows_10_30, "twenty-over-100k": twenty_over_100k,
         "rows-3-9-over-1.5M": rows_3_9_edge, "knn-window": knn_window, "rmat-transposed": rmat_transposed,
         "tiny-over-200k": tiny_over_200k}

def knn_7(n: int = 5_000_000, window: int = 20_000):
    return knn_window(n, 7, window)


def sixteen_over_4m(rows: int = 2_500_000, cols: int = 4_000_000):
    return _scattered_rows(np.full(rows, 16), cols)


def rows_20_28_over_50k(rows: int = 1_500_000, cols: int = 50_000):
    return _scattered_rows(RNG.integers(20, 29, rows), cols)


def rows_8_12_over_8k(rows: int = 4_000_000, cols: int = 8000):
    return _scattered_rows(RNG.integers(8, 13, rows), cols)


def mesh_like(n: int = 2500, shuffle: int = 64):
    """A 2-D grid's 8 neighbours and itself, each kept with probability 0.75, vertices relabelled
    within windows of ``shuffle`` (an unstructured mesh's local order)."""
    offs = [(a, b) for a in (-1, 0, 1) for b in (-1, 0, 1)]
    A = _stencil((n, n), offs).tocoo()
    kept = (RNG.random(A.nnz) < 0.75) | (A.row == A.col)
    N = n * n
    perm = (np.arange(N) // shuffle) * shuffle + np.concatenate(
        [RNG.permutation(min(shuffle, N - s)) for s in range(0, N, shuffle)])
    return sp.csr_matrix((A.data[kept], (perm[A.row[kept]], perm[A.col[kept]])), shape=(N, N))


def hypersparse_rows(rows: int = 15_000_000, cols: int = 20_000_000):
    return _scattered_rows(RNG.integers(1, 3, rows), cols)


def ten_over_2m_mid(rows: int = 200_000, cols: int = 2_000_000):
    return _scattered_rows(RNG.integers(8, 13, rows), cols)


def tiny_mid(rows: int = 500_000):
    return _scattered_rows(RNG.integers(2, 5, rows), rows)


SIXTH = {"knn-7": knn_7, "sixteen-over-4M": sixteen_over_4m, "rows-20-28-over-50k": rows_20_28_over_50k,
         "rows-8-12-over-8k": rows_8_12_over_8k, "mesh-like-2500": mesh_like, "hypersparse-15M": hypersparse_rows,
         "ten-over-2M-mid": ten_over_2m_mid, "tiny-mid-500k": tiny_mid}

def rows_5_15_over_30k(rows: int = 3_000_000, cols: int = 30_000):
    return _scattered_rows(RNG.integers(5, 16, rows), cols)


def rows_12_20_over_150k(rows: int = 2_000_000, cols: int = 150_000):
    return _scattered_rows(RNG.integers(12, 21, rows), cols)


def twenty_four_over_1m(rows: int = 1_500_000, cols: int = 1_000_000):
    return _scattered_rows(np.full(rows, 24), cols)


def knn_15(n: int = 2_500_000, window: int = 50_000):
    return knn_window(n, 15, window)


def tiny_over_40k(rows: int = 15_000_000, cols: int = 40_000):
    return _scattered_rows(RNG.integers(1, 4, rows), cols)


def rows_3_7_mid(rows: int = 400_000, cols: int = 300_000):
    return _scattered_rows(RNG.integers(3, 8, rows), cols)


def block_diagonal_8(n: int = 5_000_000):
    """Dense 8 x 8 blocks on the diagonal: every row one aligned run of 8 columns."""
    rows = np.repeat(np.arange(n, dtype=np.int64), 8)
    cols = (rows // 8) * 8 + np.tile(np.arange(8), n)
    return sp.csr_matrix((_values(rows.size), (rows, cols)), shape=(n, n))


SEVENTH = {"rows-5-15-over-30k": rows_5_15_over_30k, "rows-12-20-over-150k": rows_12_20_over_150k,
           "twenty-four-over-1M": twenty_four_over_1m, "knn-15": knn_15, "tiny-over-40k": tiny_over_40k,
           "rows-3-7-mid": rows_3_7_mid, "block-diagonal-8": block_diagonal_8}

EIGHTH = {"rows-6-14-over-60k": lambda: _scattered_rows(RNG.integers(6, 15, 3_000_000), 60_000),
          "rows-10-20-over-400k": lambda: _scattered_rows(RNG.integers(10, 21, 2_000_000), 400_000),
          "rows-2-5-over-20k": lambda: _scattered_rows(RNG.integers(2, 6, 12_000_000), 20_000),
          "knn-12-narrow": lambda: knn_window(3_000_000, 12, 2000),
          "rows-30-50-over-5M": lambda: _scattered_rows(RNG.integers(30, 51, 1_000_000), 5_000_000),
          "geometric-over-150k": lambda: _scattered_rows(np.minimum(RNG.geometric(0.4, 10_000_000), 6), 150_000),
          "rows-4-12-mid": lambda: _scattered_rows(RNG.integers(4, 13, 300_000), 100_000)}

def kron_random(a: int = 600, ka: int = 5, b: int = 5000, kb: int = 4):
    """The Kronecker product of two random matrices (a tensor-structured operator)."""
    return sp.kron(_scattered_rows(np.full(a, ka), a), _scattered_rows(np.full(b, kb), b), format="csr")


def uniform_1_64(rows: int = 1_200_000, cols: int = 3_000_000):
    return _scattered_rows(RNG.integers(1, 65, rows), cols)


def powerlaw_degree_sorted(n: int = 3_000_000, avg: int = 12):
    from spla.io import generators

    A = generators.from_spec(f"gen:powerlaw:{n}:{avg}:{min(n, 60_000)}:seed=91").to_scipy().tocsr()
    order = np.argsort(-np.diff(A.indptr), kind="stable")
    return A[order].tocsr()


def stencil9_holes(n: int = 2300, keep: float = 0.9):
    offs = [(a, b) for a in (-1, 0, 1) for b in (-1, 0, 1)]
    A = _stencil((n, n), offs).tocoo()
    kept = (RNG.random(A.nnz) < keep) | (A.row == A.col)
    return sp.csr_matrix((A.data[kept], (A.row[kept], A.col[kept])), shape=A.shape)


NINTH = {"kron-600x5000": kron_random, "uniform-1-64-over-3M": uniform_1_64,
         "powerlaw-degree-sorted": powerlaw_degree_sorted, "stencil9-holes": stencil9_holes,
         "tiny-over-100k": lambda: _scattered_rows(RNG.integers(1, 4, 12_000_000), 100_000),
         "rows-5-11-mid": lambda: _scattered_rows(RNG.integers(5, 12, 300_000), 1_000_000),
         "rows-16-over-20k": lambda: _scattered_rows(np.full(2_500_000, 16), 20_000),
         "rows-3-13-over-700k": lambda: _scattered_rows(RNG.integers(3, 14, 5_000_000), 700_000)}

MATRICES = {"stencil19-3d": stencil19_3d, "stencil13-2d": stencil13_2d, "rmat-70-12-12-6": rmat,
            "bimodal-4-96": bimodal, "banded-random-4-44": banded_random, "short-wide-1500x16M": short_wide,
            "tall-skinny-24Mx2000": tall_skinny}


def write(out: Path, names, table: dict) -> None:
    """Write table[name]() for each name as DIR/name.npz (sorted indices, uncompressed)."""
    out.mkdir(parents=True, exist_ok=True)
    for name in names:
        began = time.perf_counter()
        A = table[name]().tocsr()
        A.sort_indices()
        sp.save_npz(out / f"{name}.npz", A, compressed=False)
        print(f"{name}: {A.shape[0]:,} x {A.shape[1]:,}, {A.nnz:,} nnz ({time.perf_counter() - began:.1f} s)",
              flush=True)


def main(argv) -> int:
    table = {**MATRICES, **SECOND, **THIRD, **FOURTH, **FIFTH, **SIXTH, **SEVENTH, **EIGHTH, **NINTH}
    write(Path(argv[0]), argv[1:] or MATRICES, table)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
