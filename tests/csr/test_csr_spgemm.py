"""GPU SpGEMM on matrices spla has not seen: the structure pass (kernels/csr_structure.cu) against
NumPy, fresh products of canonical and non-canonical operands against SciPy, what is cached for
the next product, and the bound and memory fallbacks."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import to_host
from csr_helpers import assert_same, random_pair

from spla import CSRMatrix, csr_ops, device

pytestmark = pytest.mark.gpu
CHUNK = 256 * 16  # entries a block of the structure pass takes (csr_structure.py's constants)


def _host_structure(indices, indptr):
    """(sorted, canonical, longest row) by NumPy, row by row."""
    rows = [indices[indptr[i]:indptr[i + 1]] for i in range(len(indptr) - 1)]
    steps = [np.diff(r.astype(np.int64)) for r in rows]
    return (all((s >= 0).all() for s in steps), all((s > 0).all() for s in steps),
            int(np.diff(indptr).max()) if len(rows) else 0)


def _rows(lengths, rng, n_cols):
    """indptr and sorted, duplicate-free indices for rows of these lengths."""
    indptr = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    indices = np.concatenate([np.sort(rng.choice(n_cols, size=n, replace=False)) for n in lengths] or [[]])
    return indices.astype(np.int64), indptr


def _structure_case(name, rng):
    """(indices, indptr, n_cols) of one structure the pass must get right."""
    if name == "short rows":
        return (*_rows(rng.integers(0, 9, 3000), rng, 50), 50)
    if name == "a row longer than a chunk":
        lengths = rng.integers(1, 6, 500)
        lengths[17] = 3 * CHUNK + 5
        return (*_rows(lengths, rng, 4 * CHUNK), 4 * CHUNK)
    if name == "descent at a chunk's first entry":  # k = CHUNK is inside the long row
        indices, indptr = _rows([CHUNK + 40, 7, 3], rng, 2 * CHUNK)
        indices[CHUNK - 1], indices[CHUNK] = indices[CHUNK], indices[CHUNK - 1]
        return indices, indptr, 2 * CHUNK
    if name == "repeat at a chunk's first entry":
        indices, indptr = _rows([5, CHUNK, 9], rng, 2 * CHUNK)
        indices[CHUNK] = indices[CHUNK - 1]
        return indices, indptr, 2 * CHUNK
    if name == "a row starting at a chunk's first entry":  # descents between rows are allowed
        indices, indptr = _rows([CHUNK, 30, 30], rng, 2 * CHUNK)
        indices[:CHUNK] = np.arange(CHUNK, 2 * CHUNK)  # the first row ends above where the next starts
        return indices, indptr, 2 * CHUNK
    if name == "mostly empty rows":
        lengths = np.zeros(3 * CHUNK, dtype=np.int64)
        lengths[rng.choice(3 * CHUNK, 200, replace=False)] = rng.integers(1, 40, 200)
        lengths[0] = lengths[-1] = 0  # empty first and last rows
        return (*_rows(lengths, rng, 60), 60)
    if name == "one entry":
        return np.array([3]), np.array([0, 0, 1, 1]), 5
    if name == "one column":
        lengths = rng.integers(0, 2, 2 * CHUNK + 3)
        return (*_rows(lengths, rng, 1), 1)
    if name == "one long row":
        return (*_rows([2 * CHUNK + 1], rng, 3 * CHUNK), 3 * CHUNK)
    raise KeyError(name)


STRUCTURES = ["short rows", "a row longer than a chunk", "descent at a chunk's first entry",
              "repeat at a chunk's first entry", "a row starting at a chunk's first entry", "mostly empty rows",
              "one entry", "one column", "one long row"]


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64], ids=["int32", "int64"])
@pytest.mark.parametrize("spoil", ["none", "descent", "repeat"])
@pytest.mark.parametrize("name", STRUCTURES)
def test_structure_pass_matches_numpy(rng, name, spoil, index_dtype):
    cupy = device.require_cupy()
    indices, indptr, n_cols = _structure_case(name, rng)
    starts = set(indptr.tolist())
    inner = [k for k in range(1, len(indices)) if k not in starts]  # not a row's first entry
    if spoil != "none" and inner:
        k = int(rng.choice(inner))
        if spoil == "descent" and indices[k - 1] > 0:
            indices[k] = indices[k - 1] - 1
        elif spoil == "repeat":
            indices[k] = indices[k - 1]
    want = _host_structure(indices, indptr)
    A = CSRMatrix(cupy.ones(len(indices)), cupy.asarray(indices), cupy.asarray(indptr), (len(indptr) - 1, n_cols),
                  index_dtype=index_dtype)
    csr_ops._learn_structure([(A, ("sorted", "canonical", "longest-row"))])
    assert (A._known_flag("sorted"), A._known_flag("canonical"), A._known_longest_row()) == want
    assert (A.has_sorted_indices, A.has_canonical_format) == want[:2]
    host = A.to_host()  # the host's own check agrees
    assert (csr_ops._rows_increase(host, strict=False), csr_ops._rows_increase(host, strict=True)) == want[:2]


def test_one_read_answers_for_several_matrices(rng):
    cupy = device.require_cupy()
    cases = [_structure_case(name, rng) for name in STRUCTURES]
    matrices = [CSRMatrix(cupy.ones(len(i)), cupy.asarray(i), cupy.asarray(p), (len(p) - 1, n))
                for i, p, n in cases]
    csr_ops._learn_structure([(M, ("canonical", "longest-row")) for M in matrices])
    for M, (indices, indptr, _) in zip(matrices, cases):
        assert (M._known_flag("sorted"), M._known_flag("canonical"), M._known_longest_row()) == \
            _host_structure(indices, indptr)


def _operand(rng, shape, dtype, kind):
    """(a new device CSRMatrix, the same matrix in SciPy) of one kind of structure."""
    cupy = device.require_cupy()
    _, S = random_pair(rng, shape, dtype, np, density=0.15)  # duplicates, unsorted rows, an explicit zero
    if kind == "canonical":
        S.sum_duplicates()
    elif kind == "unsorted":  # no duplicates, each row shuffled
        S.sum_duplicates()
        for i in range(S.shape[0]):
            lo, hi = S.indptr[i], S.indptr[i + 1]
            order = lo + rng.permutation(hi - lo)
            S.indices[lo:hi], S.data[lo:hi] = S.indices[order], S.data[order]
        S.has_sorted_indices = False
    elif kind == "duplicates":  # sorted rows that repeat columns
        S.has_sorted_indices = False
        S.sort_indices()
    elif kind == "explicit zeros":
        S.sum_duplicates()
        S.data[rng.random(S.nnz) < 0.3] = 0
    A = CSRMatrix((cupy.array(S.data), cupy.array(S.indices), cupy.array(S.indptr)), shape=shape)
    return A, sp.csr_array((S.data.copy(), S.indices.copy(), S.indptr.copy()), shape=shape)


KINDS = ["canonical", "unsorted", "duplicates", "explicit zeros", "mixed"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("kind_b", KINDS)
@pytest.mark.parametrize("kind_a", KINDS)
def test_fresh_products_match_scipy(rng, kind_a, kind_b, dtype):
    A, S = _operand(rng, (70, 45), dtype, kind_a)
    B, T = _operand(rng, (45, 55), dtype, kind_b)
    before = [to_host(a).copy() for M in (A, B) for a in (M.data, M.indices, M.indptr)]
    want_a, want_b = (_host_structure(to_host(M.indices), to_host(M.indptr)) for M in (A, B))
    assert_same(A @ B, S @ T, device.require_cupy())
    after = [to_host(a) for M in (A, B) for a in (M.data, M.indices, M.indptr)]
    for kept, now in zip(before, after):
        np.testing.assert_array_equal(now, kept)  # operands are never canonicalised in place
    assert A._known_flag("canonical") == want_a[1]  # what the pass cached is what the structure is
    assert (B._known_flag("sorted"), B._known_flag("canonical"), B._known_longest_row()) == want_b


@pytest.mark.parametrize("kind", ["canonical", "mixed"])
def test_fresh_square_product_matches_scipy(rng, kind):
    A, S = _operand(rng, (80, 80), np.float64, kind)
    assert_same(A @ A, S @ S, device.require_cupy())
    fresh = CSRMatrix(A.data, A.indices, A.indptr, A.shape, validate=False)  # the same arrays, nothing known
    assert_same(fresh @ fresh, S @ S, device.require_cupy())


def _count_passes(monkeypatch):
    from spla.backends.cuda import csr_structure

    passes = []
    queue = csr_structure.queue_structure
    monkeypatch.setattr(csr_structure, "queue_structure", lambda *args: passes.append(args) or queue(*args))
    return passes


def test_a_new_matrix_costs_one_pass_and_a_seen_one_none(monkeypatch, rng):
    A, S = _operand(rng, (60, 60), np.float64, "canonical")
    B, T = _operand(rng, (60, 60), np.float64, "mixed")
    passes = _count_passes(monkeypatch)
    C = A @ A
    assert len(passes) == 1
    A @ A
    assert len(passes) == 1
    A @ B  # only B is new
    assert len(passes) == 2
    # cuSPARSE's product is known canonical: multiplying it needs no pass when its longest row is not asked
    assert C._known_flag("canonical") is True
    host = C.to_host()
    assert csr_ops._rows_increase(host, strict=True)
    assert_same(C @ A, (S @ S) @ S, device.require_cupy())
    assert len(passes) == 2


def test_bound_that_does_not_fit_takes_the_exact_count(monkeypatch, rng):
    """nnz(A) x B's longest row overstates the products when B has one long row that A seldom
    meets: the exact count, not the row-block fallback, then decides."""
    cupy = device.require_cupy()
    n = 400
    rows = np.concatenate((np.zeros(n, dtype=np.int64), rng.integers(1, n, 4 * n)))  # row 0 full
    cols = np.concatenate((np.arange(n), rng.integers(0, n, 4 * n)))
    T = sp.csr_array((rng.standard_normal(len(rows)), (rows, cols)), shape=(n, n))
    rows = np.concatenate(([5], rng.integers(0, 300, 2400)))
    cols = np.concatenate(([0], rng.integers(1, n, 2400)))  # one entry meets the long row
    S = sp.csr_array((rng.standard_normal(len(rows)), (rows, cols)), shape=(300, n))
    S.sum_duplicates()
    T.sum_duplicates()
    A = CSRMatrix((cupy.array(S.data), cupy.array(S.indices), cupy.array(S.indptr)), shape=S.shape)
    B = CSRMatrix((cupy.array(T.data), cupy.array(T.indices), cupy.array(T.indptr)), shape=T.shape)
    exact = csr_ops.spgemm_products(A, B)
    bound = A.nnz * n
    assert 4 * exact < bound
    room = 2 * csr_ops.spgemm_bytes(exact, A.shape[0], np.float64)
    assert room < csr_ops.spgemm_bytes(bound, A.shape[0], np.float64)
    monkeypatch.setattr(device, "free_device_memory", lambda: room)

    def no_blocks(*args):
        raise AssertionError("the exact count fits: no row blocks")

    monkeypatch.setattr(csr_ops, "_spgemm_in_row_blocks", no_blocks)
    assert_same(A @ B, S @ T, cupy)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128], ids=lambda d: np.dtype(d).name)
def test_fresh_non_canonical_operands_in_row_blocks(monkeypatch, rng, dtype):
    A, S = _operand(rng, (300, 200), dtype, "mixed")
    B, T = _operand(rng, (200, 150), dtype, "duplicates")
    monkeypatch.setattr(csr_ops, "_CUSPARSE_PRODUCTS", csr_ops.spgemm_products(A, B) // 6)
    cuts = []
    row_blocks = csr_ops._row_blocks
    monkeypatch.setattr(csr_ops, "_row_blocks", lambda *args: cuts.append(row_blocks(*args)) or cuts[-1])
    C = A @ B
    assert cuts and len(cuts[0]) > 4, cuts
    assert_same(C, S @ T, device.require_cupy())
    assert C._known_flag("canonical") is True and csr_ops._rows_increase(C.to_host(), strict=True)


def test_stage_hook_names_every_stage_in_order(rng):
    A, S = _operand(rng, (50, 50), np.float64, "mixed")
    seen = []
    C = csr_ops.sparse_matmul(A, A, stage=seen.append)
    assert seen == ["check", "bound", "operands", "cuSPARSE", "wrap"]
    assert_same(C, S @ S, device.require_cupy())


@pytest.mark.parametrize("kind", ["canonical", "mixed"])
def test_int64_indices_and_a_cupyx_without_from_parts(monkeypatch, rng, kind):
    """int64 indices take cupyx's public constructor; so does every operand where cupyx lacks
    its constructor from parts (older CuPy): the same products either way."""
    cupy = device.require_cupy()
    A, S = _operand(rng, (60, 50), np.float64, kind)
    B, T = _operand(rng, (50, 40), np.complex128, "canonical")
    wide = [CSRMatrix(M.data, M.indices, M.indptr, M.shape, index_dtype=np.int64) for M in (A, B)]
    assert_same(wide[0] @ wide[1], S @ T, cupy)
    monkeypatch.setattr(csr_ops, "_cupyx_from_parts", lambda: None)
    fresh = [CSRMatrix(M.data, M.indices, M.indptr, M.shape) for M in (A, B)]
    assert_same(fresh[0] @ fresh[1], S @ T, cupy)
    assert_same(fresh[0] @ fresh[0].T, S @ S.T, cupy)
