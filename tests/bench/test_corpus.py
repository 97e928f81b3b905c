"""spla.bench.corpus at tiny sizes: every family is a canonical CSR matrix of about
the requested nnz with the shape it advertises, builds are deterministic, and the
fit/report halves split every kind of shape."""

from __future__ import annotations

import numpy as np
import pytest

from spla.bench import corpus
from spla.errors import InputError

TARGET = 20_000


def _lengths(A):
    return np.diff(np.asarray(A.indptr, dtype=np.int64))


def _square(A):
    return A.n_rows == A.n_cols


def _stencil(points, dims, diagonal):
    def check(A):
        lengths = _lengths(A)
        side = round(A.n_rows ** (1 / dims))
        assert _square(A) and side ** dims == A.n_rows
        assert lengths.max() == points and lengths.min() >= 1
        S = A.to_scipy()
        assert np.allclose(S.diagonal(), diagonal)  # -1 off the diagonal: symmetric, dominant
        assert abs(S - S.T).max() == 0
        assert np.all(S.sum(axis=1) >= 0)
    return check


def _powerlaw(mean, longest):
    def check(A):
        lengths = _lengths(A)
        assert _square(A) and abs(lengths.mean() - mean) < 0.05 * mean
        assert lengths.max() == longest(A.n_rows)
        assert lengths.std() > 0.5 * mean  # a tail, not regular rows
    return check


def _rmat(A):
    lengths = _lengths(A)
    assert _square(A) and A.n_rows & (A.n_rows - 1) == 0
    assert lengths.max() > 10 * lengths.mean()



def _bimodal(A):
    assert set(np.unique(_lengths(A))) == {4, 128}


def _multimodal(A):
    lengths = _lengths(A)
    for lo, hi in ((1, 3), (9, 15), (72, 120)):
        assert np.count_nonzero((lengths >= lo) & (lengths <= hi)) > 0.1 * A.n_rows
    assert lengths.max() > 8 * np.median(lengths)


def _banded_fixed(A):
    coo = A.to_scipy().tocoo()
    assert np.abs(coo.row - coo.col).max() == 16 and _lengths(A).max() == 33


def _banded_random(A):
    lengths, S = _lengths(A), A.to_scipy()
    assert lengths.min() >= 1 and lengths.max() == 64 and np.unique(lengths).size > 32
    for i in range(0, A.n_rows, 37):  # contiguous columns around the diagonal
        cols = S.indices[S.indptr[i]:S.indptr[i + 1]]
        assert np.array_equal(cols, np.arange(cols[0], cols[0] + cols.size))
        assert cols[0] <= i + 1 and cols[-1] >= i - 1 or cols[0] == 0 or cols[-1] == A.n_cols - 1


def _block_dense(A):
    lengths = _lengths(A)
    long = lengths > 16
    assert 1 <= np.count_nonzero(long) <= A.n_rows // 50
    assert lengths[long].sum() > 0.3 * A.nnz


def _block_sparse(A):
    S = A.to_scipy()
    assert A.n_rows % 8 == 0 and np.all(_lengths(A) == 40)
    for block_row in range(0, A.n_rows, 8 * 7):  # the 8 rows of a block row share 5 full 8-column blocks
        pattern = S.indices[S.indptr[block_row]:S.indptr[block_row + 1]]
        assert np.all(pattern.reshape(5, 8) % 8 == np.arange(8))
        for r in range(block_row, block_row + 8):
            assert np.array_equal(S.indices[S.indptr[r]:S.indptr[r + 1]], pattern)


def _empty_rows(A):
    lengths = _lengths(A)
    assert np.count_nonzero(lengths == 0) == int(0.9 * A.n_rows)
    assert lengths.max() == 512


def _hubs(count, share):
    def check(A):
        lengths = _lengths(A)
        top = np.sort(lengths)[-count:]
        assert top.sum() > share * A.nnz and top.min() > 10 * np.median(lengths)
    return check


def _tall(A):
    assert A.n_cols == 512 and A.n_rows >= 4 * A.n_cols and np.all(_lengths(A) == 8)


def _wide(A):
    assert A.n_cols >= 16 * A.n_rows and np.unique(_lengths(A)).size == 1


def _fixed(k):
    def check(A):
        assert _square(A) and np.all(_lengths(A) == k)
    return check


def _zipf(A):
    counts = np.bincount(np.asarray(A.indices), minlength=A.n_cols)
    hot = np.sort(counts)[::-1][: max(1, A.n_cols // 100)]
    assert hot.sum() > 0.15 * A.nnz  # 1% of the columns take far more than 1% of the entries
    assert np.all(_lengths(A) == 8)


def _knn(A):
    assert _square(A) and np.all(_lengths(A) == corpus.KNN_K)


def test_knn_window_columns_lie_near_the_diagonal():
    A = corpus.build("knn-window", 400_000)  # 40,000 rows: most rows' windows lie inside the matrix
    S = A.to_scipy().tocoo()
    half = corpus.KNN_HALF_WIDTH
    inner = (S.row >= 2 * half) & (S.row < A.n_rows - 2 * half)  # edge rows shift their window inward
    assert inner.sum() > 0.4 * A.nnz
    distance = np.abs(S.col - S.row)[inner]
    assert distance.max() <= half + corpus.KNN_K and distance.mean() > half / 4  # spread over the window


def _between(lo, hi, n_cols=None):
    def check(A):
        lengths = _lengths(A)
        assert lengths.min() == lo and lengths.max() == hi
        assert np.count_nonzero(lengths % 4) > 0.5 * A.n_rows  # most rows are not whole float32 packs
        assert A.n_cols == n_cols if n_cols else _square(A)
    return check


PROPERTIES = {
    "stencil5": _stencil(5, 2, 4), "stencil7": _stencil(7, 3, 6), "stencil9": _stencil(9, 2, 9),
    "stencil27": _stencil(27, 3, 27), "stencil25": _stencil(25, 3, 25),
    "powerlaw-steep": _powerlaw(4, lambda n: 256),
    "powerlaw-mid": _powerlaw(8, lambda n: round(8 * np.sqrt(n))),
    "powerlaw-heavy": _powerlaw(24, lambda n: n // 16),
    "rmat-graph500": _rmat, "rmat-skewed": _rmat, "rmat-mild": _rmat,
    "bimodal": _bimodal, "multimodal": _multimodal,
    "banded-fixed": _banded_fixed, "banded-random": _banded_random,
    "block-dense": _block_dense, "block-sparse": _block_sparse,
    "empty-rows": _empty_rows, "mixed-lengths": _hubs(16, 0.3), "hub-rows": _hubs(24, 0.2),
    "tall-skinny": _tall, "short-wide": _wide,
    "random-uniform": _fixed(16), "short-random": _fixed(3), "zipf-columns": _zipf,
    "knn-window": _knn, "tiny-narrow": _between(1, 4, 2000), "random-width": _between(5, 15),
    "random-width-60k": _between(5, 15, 60_000),
}


def test_every_family_has_a_property_check():
    assert set(PROPERTIES) == set(corpus.FAMILIES) and len(corpus.FAMILIES) >= 20


@pytest.mark.parametrize("name", list(corpus.FAMILIES))
def test_family_is_a_canonical_csr_with_its_shape(name):
    A = corpus.build(name, TARGET, dtype=np.float32)
    A.validate()
    assert A.dtype == np.float32 and 0.5 * TARGET <= A.nnz <= 2 * TARGET
    S = A.to_scipy()
    assert S.has_canonical_format  # sorted, distinct columns in every row
    assert np.all(np.isfinite(A.data)) and np.count_nonzero(A.data) == A.nnz
    PROPERTIES[name](A)


@pytest.mark.parametrize("name", ["rmat-skewed", "banded-random", "multimodal", "zipf-columns", "stencil25"])
def test_builds_are_deterministic_and_seeded(name):
    A, B = corpus.build(name, 5000, seed=3), corpus.build(name, 5000, seed=3)
    for a, b in ((A.indptr, B.indptr), (A.indices, B.indices), (A.data, B.data)):
        assert np.array_equal(a, b)
    C = corpus.build(name, 5000, seed=4)
    if name != "stencil25":  # the stencil has no randomness
        assert C.nnz != A.nnz or not np.array_equal(C.indices, A.indices) or not np.array_equal(C.data, A.data)


def test_size_scales_with_the_target():
    for name in corpus.families():
        small, large = corpus.build(name, 5000), corpus.build(name, 80_000)
        assert 4 < large.nnz / small.nnz < 40, name


def test_rmat_probability_sets_differ_in_skew():
    skew = {}
    for name in ("rmat-mild", "rmat-graph500", "rmat-skewed"):
        lengths = _lengths(corpus.build(name, 60_000))
        skew[name] = lengths.max() / lengths.mean()
    assert skew["rmat-mild"] < skew["rmat-graph500"] < skew["rmat-skewed"]


def test_halves_split_every_kind():
    fit, report = corpus.families("fit"), corpus.families("report")
    assert set(fit).isdisjoint(report) and set(fit) | set(report) == set(corpus.FAMILIES)
    assert len(fit) >= 10 and len(report) >= 10
    for kind in {f.kind for f in corpus.FAMILIES.values()}:
        halves = {f.half for f in corpus.FAMILIES.values() if f.kind == kind}
        assert halves == set(corpus.HALVES), kind
    assert [name for name, _ in corpus.corpus(2000, half="report")] == report


def test_bad_arguments():
    with pytest.raises(InputError, match="unknown corpus family"):
        corpus.build("nope", 10_000)
    with pytest.raises(InputError, match="nnz >="):
        corpus.build("stencil5", 10)
    with pytest.raises(InputError, match="half"):
        corpus.families("train")
