"""gen: specs: sizes, distributions (checked statistically), CSR validity, seeds, errors."""

from __future__ import annotations

import time

import numpy as np
import pytest
import scipy.sparse as sp

from spla import InputError
from spla.io import generators


def assert_valid_csr(A):
    """CSR invariants plus strictly increasing columns inside every row and int32 indices."""
    A.validate()
    assert A.index_dtype == np.int32
    rows = np.repeat(np.arange(A.n_rows), np.diff(A.indptr))
    same_row = rows[1:] == rows[:-1]
    assert (np.diff(A.indices.astype(np.int64))[same_row] > 0).all(), "columns not strictly increasing"
    assert np.isfinite(A.data).all()


def entry_rows(A):
    return np.repeat(np.arange(A.n_rows), np.diff(A.indptr))


SMALL_SPECS = [  # gen:weblike is checked on its own below (it takes a second to build)
    "gen:powerlaw:20000:6",
    "gen:powerlaw:20000:6:900",
    "gen:poisson2d:37",
    "gen:poisson3d:11",
    "gen:banded:500:7",
    "gen:random:3000:9",
    "gen:hugerows:5000:4:3000",
    "gen:blockdense:4000:30:500:0.4",
    "gen:rmat:12:8",
]


@pytest.mark.parametrize("spec", SMALL_SPECS)
def test_every_kind_is_valid_and_reproducible(spec):
    A = generators.from_spec(spec)
    assert_valid_csr(A)
    B = generators.from_spec(spec)
    for name in ("data", "indices", "indptr"):
        assert np.array_equal(getattr(A, name), getattr(B, name))


@pytest.mark.parametrize("spec", ["gen:powerlaw:20000:6", "gen:random:3000:9", "gen:hugerows:5000:4:3000",
                                  "gen:blockdense:4000:30:500:0.4", "gen:rmat:12:8", "gen:banded:500:7"])
def test_seed_changes_the_matrix(spec):
    A = generators.from_spec(spec + ":seed=1")
    B = generators.from_spec(spec + ":seed=2")
    assert not (np.array_equal(A.indices, B.indices) and np.array_equal(A.data, B.data))
    assert np.array_equal(generators.from_spec(spec, seed=1).data, A.data)


def test_weblike_has_web_google_shape_and_is_fast():
    start = time.perf_counter()
    A = generators.from_spec("gen:weblike")
    elapsed = time.perf_counter() - start
    assert_valid_csr(A)
    assert A.shape == (916_428, 916_428) and A.nnz == 5_105_039
    lengths = A.row_lengths()
    assert int(lengths.max()) == 6_326
    assert int((lengths == 0).sum()) == 916_428 - 875_713
    # Heavy tail: a small share of rows holds a large share of the nnz.
    top = np.sort(lengths)[::-1]
    assert top[: len(top) // 100].sum() / A.nnz > 0.25
    # Values are random in (0, 1], exact in float32, not all ones.
    assert 0 < A.data.min() and A.data.max() <= 1 and A.data.std() > 0.2
    assert np.array_equal(A.data.astype(np.float32).astype(np.float64), A.data)
    # Crawl locality: most links near the diagonal, a real share far away.
    distance = np.abs(A.indices.astype(np.int64) - entry_rows(A))
    assert 0.6 < (distance <= 8192).mean() < 0.9
    assert 0.1 < (distance > 100_000).mean() < 0.3
    assert elapsed < 10, f"gen:weblike took {elapsed:.1f} s (target < 3 s)"


def test_powerlaw_mean_max_and_tail_exponent():
    n, avg, max_row = 200_000, 8, 4000
    A = generators.from_spec(f"gen:powerlaw:{n}:{avg}:{max_row}:seed=3")
    lengths = A.row_lengths()
    assert A.nnz == n * avg and int(lengths.max()) == max_row and int(lengths.min()) >= 1
    # The complementary CDF is a straight line in log-log: slopes over two decades agree.
    ccdf = lambda x: (lengths >= x).mean()
    slope_low = np.log(ccdf(100) / ccdf(10)) / np.log(10)
    slope_high = np.log(ccdf(1000) / ccdf(100)) / np.log(10)
    assert -2.5 < slope_low < -0.3
    assert abs(slope_low - slope_high) < 0.35, (slope_low, slope_high)


def test_powerlaw_default_max_row_follows_sqrt_n():
    A = generators.from_spec("gen:powerlaw:40000:8")
    assert int(A.row_lengths().max()) == round(8 * 40000 ** 0.5)


def test_poisson_matrices_equal_kronecker_sums():
    n = 13
    T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
    I = sp.identity(n)
    ref2 = (sp.kron(I, T) + sp.kron(T, I)).tocsr()
    ref3 = (sp.kron(sp.kron(I, I), T) + sp.kron(sp.kron(I, T), I) + sp.kron(sp.kron(T, I), I)).tocsr()
    for spec, ref in ((f"gen:poisson2d:{n}", ref2), (f"gen:poisson3d:{n}", ref3)):
        A = generators.from_spec(spec)
        assert_valid_csr(A)
        assert abs(A.to_scipy() - ref).max() == 0


def test_poisson_corner_sizes():
    assert generators.from_spec("gen:poisson2d:1").to_scipy().toarray().tolist() == [[4.0]]
    assert generators.from_spec("gen:poisson3d:2").nnz == 8 * 4


def test_banded_is_symmetric_positive_definite_band():
    n, bw = 200, 6
    A = generators.from_spec(f"gen:banded:{n}:{bw}:seed=5").to_scipy()
    assert abs(A - A.T).max() == 0
    rows, cols = A.nonzero()
    assert np.abs(rows - cols).max() == bw
    assert A.nnz == n * (2 * bw + 1) - bw * (bw + 1)
    off = A - sp.diags(A.diagonal())
    assert (A.diagonal() > np.asarray(abs(off).sum(axis=1)).ravel()).all()
    np.linalg.cholesky(A.toarray())  # raises unless positive definite


def test_random_rows_are_uniform():
    n, k = 4000, 25
    A = generators.from_spec(f"gen:random:{n}:{k}:seed=11")
    assert A.nnz == n * k and (A.row_lengths() == k).all()
    # Column counts over 40 equal bins: chi-square with 39 degrees of freedom.
    counts = np.bincount(A.indices * 40 // n, minlength=40)
    expected = A.nnz / 40
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert chi2 < 80, chi2
    # Position inside the row tells nothing about the column beyond order: first columns small.
    first = A.indices[A.indptr[:-1]]
    assert abs(first.mean() - n / (k + 1)) < 0.1 * n / (k + 1)


def test_hugerows_lengths():
    n, h, length = 20_000, 6, 10_000
    A = generators.from_spec(f"gen:hugerows:{n}:{h}:{length}")
    lengths = A.row_lengths()
    huge = np.flatnonzero(lengths > 15)
    assert huge.size == h
    assert (lengths[huge] >= 0.45 * length).all() and (lengths[huge] <= length).all()
    assert set(np.unique(lengths[lengths <= 15])) <= set(range(1, 16))
    assert abs(lengths[lengths <= 15].mean() - 8) < 0.2
    # Huge rows span the matrix.
    row = huge[0]
    cols = A.indices[A.indptr[row]:A.indptr[row + 1]]
    assert cols.min() < 0.05 * n and cols.max() > 0.95 * n


def test_blockdense_rows_fill_one_column_window():
    n, r, c, density = 6000, 40, 800, 0.25
    A = generators.from_spec(f"gen:blockdense:{n}:{r}:{c}:{density}:seed=2")
    lengths = A.row_lengths()
    dense = np.flatnonzero(lengths == round(density * c))
    assert dense.size == r
    lo = min(A.indices[A.indptr[i]:A.indptr[i + 1]].min() for i in dense)
    hi = max(A.indices[A.indptr[i]:A.indptr[i + 1]].max() for i in dense)
    assert hi - lo < c
    assert hi - lo > 0.95 * c


def test_rmat_quadrant_probabilities():
    scale = 16
    A = generators.rmat(scale, 1, seed=4, permute=False)
    n = 1 << scale
    assert A.shape == (n, n) and 0.97 * n < A.nnz <= n
    rows, cols = entry_rows(A), A.indices
    top, left = rows < n // 2, cols < n // 2
    assert abs(top.mean() - 0.76) < 0.02
    assert abs(left.mean() - 0.76) < 0.02
    assert abs((top & left).mean() - 0.57) < 0.02


def test_rmat_degrees_are_skewed_after_relabelling():
    A = generators.from_spec("gen:rmat:14:16")
    assert A.nnz <= 16 << 14
    lengths = np.sort(A.row_lengths())[::-1]
    assert lengths[0] > 30 * lengths.mean()
    assert lengths[: len(lengths) // 20].sum() > 0.3 * A.nnz
    # Relabelled: without it the heaviest row would be row 0 (all bits in the a quadrant).
    assert int(np.argmax(A.row_lengths())) != 0


def test_dtype_option():
    assert generators.from_spec("gen:random:50:3:dtype=float32").dtype == np.float32
    assert generators.from_spec("gen:random:50:3", dtype=np.float32).dtype == np.float32
    assert generators.from_spec("gen:random:50:3").dtype == np.float64


@pytest.mark.parametrize("spec, fragment", [
    ("gen:nosuch", "unknown generator kind 'nosuch'"),
    ("gen:random:10", "random takes 2 arguments, got 1; expected gen:random:N:K[:seed=S]"),
    ("gen:random:10:2:3", "takes 2 arguments, got 3"),
    ("gen:poisson2d:abc", "N must be a number"),
    ("gen:poisson2d:2.5", "N must be an integer"),
    ("gen:random:10:20", "0 <= K <= N"),
    ("gen:random:10:2:seed=x", "seed must be a non-negative integer"),
    ("gen:random:10:2:colour=red", "unknown or repeated option"),
    ("gen:random:seed=1:10:2", "arguments must come before options"),
    ("gen:random:10:2:dtype=int8", "dtype must be float32 or float64"),
    ("gen:powerlaw:100:8:4", "MAXROW=4 is below the average"),
    ("gen:blockdense:100:5:10:1.5", "0 < DENSITY <= 1"),
    ("random:10:2", "is not a generator spec"),
])
def test_bad_specs_name_the_spec_and_form(spec, fragment):
    with pytest.raises(InputError) as info:
        generators.from_spec(spec)
    message = str(info.value)
    assert fragment in message
    assert "\n" not in message


def test_conflicting_seeds_are_refused():
    with pytest.raises(InputError, match="seed given twice"):
        generators.from_spec("gen:random:10:2:seed=1", seed=2)


def test_number_literals():
    assert generators.from_spec("gen:random:1e3:2").n_rows == 1000
    assert generators.from_spec("gen:random:1_000:2").n_rows == 1000


def test_usage_lists_every_kind():
    text = generators.usage()
    for name in generators.KINDS:
        assert f"gen:{name}" in text


def test_chunked_fill_matches_across_chunk_sizes(monkeypatch):
    """Structure must not depend on the chunking: a deterministic matrix is identical."""
    A = generators.from_spec("gen:poisson2d:300")
    monkeypatch.setattr(generators, "CHUNK_NNZ", 1 << 12)
    B = generators.from_spec("gen:poisson2d:300")
    assert np.array_equal(A.indices, B.indices) and np.array_equal(A.data, B.data)
    assert_valid_csr(generators.from_spec("gen:hugerows:3000:3:2000"))
