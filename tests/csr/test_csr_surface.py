"""The csr_array surface of CSRMatrix against SciPy: values, dtype, shape and errors, on both sides."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as sla
from conftest import to_host
from csr_helpers import DTYPES, SHAPES, assert_same, check, random_pair, random_values
from hypothesis import given, settings
from hypothesis import strategies as st

import spla
from spla import CSRMatrix, InputError

UNARY = {
    "neg": lambda M, xp: -M,
    "abs": lambda M, xp: abs(M),
    "mul_int": lambda M, xp: M * 3,
    "rmul_float": lambda M, xp: 2.5 * M,
    "mul_np_float32": lambda M, xp: M * np.float32(2),
    "div_int": lambda M, xp: M / 2,
    "div_float": lambda M, xp: M / 0.5,
    "power2": lambda M, xp: M.power(2),
    "power_half_f64": lambda M, xp: M.power(0.5, dtype=np.float64),
    "power0": lambda M, xp: M.power(0),
    "conj": lambda M, xp: M.conj(),
    "transpose": lambda M, xp: M.T,
    "copy": lambda M, xp: M.copy(),
    "tocsr": lambda M, xp: M.tocsr(),
    "toarray": lambda M, xp: M.toarray(),
    "todense": lambda M, xp: M.todense(),
    "tocoo": lambda M, xp: M.tocoo().toarray(),
    "tocsc": lambda M, xp: M.tocsc().toarray(),
    "add_zero": lambda M, xp: M + 0,
    "add_scalar": lambda M, xp: M + 1,
    "sum": lambda M, xp: M.sum(),
    "sum0": lambda M, xp: M.sum(axis=0),
    "sum1": lambda M, xp: M.sum(axis=1),
    "sum_neg_axis": lambda M, xp: M.sum(axis=-1),
    "sum_f64": lambda M, xp: M.sum(axis=0, dtype=np.float64),
    "mean": lambda M, xp: M.mean(),
    "mean0": lambda M, xp: M.mean(axis=0),
    "mean1": lambda M, xp: M.mean(axis=1),
    "diag": lambda M, xp: M.diagonal(),
    "diag_up": lambda M, xp: M.diagonal(1),
    "diag_down": lambda M, xp: M.diagonal(-2),
    "trace": lambda M, xp: M.trace(),
    "trace1": lambda M, xp: M.trace(1),
    "count_nonzero": lambda M, xp: M.count_nonzero(),
    "size": lambda M, xp: M.size,
    "ndim": lambda M, xp: M.ndim,
    "nnz": lambda M, xp: M.nnz,
}

REAL_ONLY = {  # SciPy's max/min compare values: real dtypes
    "max": lambda M, xp: M.max(),
    "min": lambda M, xp: M.min(),
    "max0": lambda M, xp: M.max(axis=0),
    "max1": lambda M, xp: M.max(axis=1),
    "min0": lambda M, xp: M.min(axis=0),
    "min1": lambda M, xp: M.min(axis=1),
    "max_explicit": lambda M, xp: M.max(axis=1, explicit=True),
}


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_unary_operations_match_scipy(xp, rng, shape, dtype):
    A, S = random_pair(rng, shape, dtype, xp)
    ops = dict(UNARY)
    if np.dtype(dtype).kind != "c":
        ops.update(REAL_ONLY)
    if xp is not np and np.dtype(dtype).kind in "iu":  # cupyx has no integer COO/CSC: InputError
        for name in ("tocoo", "tocsc"):
            with pytest.raises(InputError, match="cupyx"):
                ops.pop(name)(A, xp)
    for name, op in ops.items():
        try:
            check(op, A, S, xp)
        except AssertionError as exc:
            raise AssertionError(f"{name}: {exc}") from None


def _rows_index(M, xp):
    return M[[0, M.shape[0] - 1, 0]]


INDEXING = {
    "row": lambda M, xp: M[0],
    "last_row": lambda M, xp: M[-1],
    "row_slice": lambda M, xp: M[1:4],
    "row_slice_step": lambda M, xp: M[::2],
    "row_slice_reverse": lambda M, xp: M[::-1],
    "fancy_rows": _rows_index,
    "bool_rows": lambda M, xp: M[xp.arange(M.shape[0]) % 2 == 0],
    "col_slice": lambda M, xp: M[:, :3],
    "col_fancy": lambda M, xp: M[:, [0, M.shape[1] - 1]],
    "column": lambda M, xp: M[:, 0],
    "row_and_cols": lambda M, xp: M[1:3, 1:],
    "element": lambda M, xp: M[0, 0],
    "element_neg": lambda M, xp: M[-1, -1],
    "pairs": lambda M, xp: M[[0, M.shape[0] - 1], [M.shape[1] - 1, 0]],
    "out_of_range": lambda M, xp: M[M.shape[0]],
}


@pytest.mark.parametrize("dtype", [np.bool_, np.int64, np.float32, np.complex128], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_indexing_matches_scipy(xp, rng, shape, dtype):
    A, S = random_pair(rng, shape, dtype, xp)
    for name, op in INDEXING.items():
        def op_2d(M, module, op=op):
            # spla is 2-D only: compare with csr_matrix, whose results are 2-D too
            return op(sp.csr_matrix(M) if isinstance(M, sp.sparray) else M, module)
        try:
            check(op_2d, A, S, xp)
        except AssertionError as exc:
            raise AssertionError(f"{name}: {exc}") from None


def test_fancy_row_indexing_gathers_many_rows(xp, rng):
    A, S = random_pair(rng, (500, 300), np.float64, xp, density=0.05)
    rows = rng.integers(-500, 500, 2000)
    assert_same(A[xp.asarray(rows)], S[rows], xp)
    assert_same(A[100:400], S[100:400], xp)


PAIRS = [(np.float32, np.float64), (np.int32, np.float64), (np.bool_, np.bool_), (np.int32, np.int64),
         (np.complex64, np.float64), (np.float32, np.complex128), (np.float64, np.float64)]

BINARY = {
    "add": lambda M, N, xp: M + N,
    "sub": lambda M, N, xp: M - N,
    "mul": lambda M, N, xp: M * N,
    "multiply": lambda M, N, xp: M.multiply(N),
    "matmul_T": lambda M, N, xp: M @ N.T,
    "add_dense": lambda M, N, xp: M + N.toarray(),
    "rsub_dense": lambda M, N, xp: N.toarray() - M,
    "multiply_dense": lambda M, N, xp: M.multiply(N.toarray()),
    "multiply_row": lambda M, N, xp: M.multiply(N.toarray()[:1]),
}


@pytest.mark.parametrize("dtypes", PAIRS, ids=lambda p: f"{np.dtype(p[0]).name}-{np.dtype(p[1]).name}")
@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (1, 1), (6, 4)], ids=str)
def test_binary_operations_match_scipy(xp, rng, shape, dtypes):
    A, S = random_pair(rng, shape, dtypes[0], xp)
    B, T = random_pair(rng, shape, dtypes[1], xp)
    # A @ B.T may cancel to ~0; the two sides sum duplicates in different orders, so rounding
    # is bounded by the terms' size |A| @ |B|^T, not by the result's
    def magnitudes(M):  # |each stored entry|, duplicates kept (SciPy's abs() sums them first)
        return sp.csr_array((np.abs(M.data).astype(np.float64), M.indices, M.indptr), shape=M.shape).toarray()

    terms = magnitudes(S) @ magnitudes(T).T
    for name, op in BINARY.items():
        atol = 1e-13 * float(terms.max(initial=0.0)) if name == "matmul_T" else 0.0
        try:
            check(lambda M, module, op=op: op(M, B if module is xp and isinstance(M, CSRMatrix) else T, module),
                  A, S, xp, atol=atol)
        except AssertionError as exc:
            raise AssertionError(f"{name}: {exc}") from None


def test_sparse_operands_from_scipy_and_mixed_order(xp, rng):
    A, S = random_pair(rng, (9, 7), np.float64, xp)
    B, T = random_pair(rng, (7, 5), np.float32, xp)
    assert_same(A @ T, S @ T, xp)   # a SciPy operand is moved to A's side
    assert_same(A + S, S + S, xp)
    want = T.T @ S.T
    got = T.T @ A.T if xp is np else B.T @ A.T  # SciPy @ CSRMatrix lands in __rmatmul__
    assert_same(got, want, xp)


@pytest.mark.parametrize("a_dtype,x_dtype", [
    (np.float64, np.float64), (np.float32, np.float64), (np.float32, np.float32), (np.int32, np.float32),
    (np.int64, np.int64), (np.bool_, np.bool_), (np.int32, np.complex64), (np.float64, np.complex128),
    (np.complex64, np.float32), (np.complex128, np.complex128), (np.bool_, np.int8)],
    ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_products_with_dense_operands(xp, rng, shape, a_dtype, x_dtype):
    A, S = random_pair(rng, shape, a_dtype, xp)
    m, n = shape
    x = random_values(rng, n, x_dtype)
    X = random_values(rng, n * 3, x_dtype).reshape(n, 3)
    y = random_values(rng, m, x_dtype)
    Y = random_values(rng, m * 2, x_dtype).reshape(2, m)
    assert_same(A @ xp.asarray(x), S @ x, xp)
    assert_same(A @ xp.asarray(X), S @ X, xp)
    assert_same(A.dot(xp.asarray(x)), S.dot(x), xp)
    assert_same(xp.asarray(y) @ A, y @ S, xp)
    assert_same(xp.asarray(Y) @ A, Y @ S, xp)
    assert_same(A.matvec(xp.asarray(x)), S @ x, xp)
    assert_same(A.rmatvec(xp.asarray(y)), S.conj().T @ y, xp)
    assert_same(A.matmat(xp.asarray(X)), S @ X, xp)
    if xp is np:
        assert_same(np.dot(A, x), S @ x, xp)


def test_matmul_refuses_what_scipy_refuses(xp, rng):
    A, _ = random_pair(rng, (4, 3), np.float64, xp)
    with pytest.raises(ValueError):
        A @ xp.ones(4)
    with pytest.raises(ValueError):
        A @ 2.0
    with pytest.raises(ValueError):
        A @ A


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_clean_ups_match_scipy(xp, rng, shape, dtype):
    A, S = random_pair(rng, shape, dtype, xp)
    assert A.has_canonical_format == S.has_canonical_format
    assert A.has_sorted_indices == S.has_sorted_indices
    for method in ("sort_indices", "eliminate_zeros", "sum_duplicates"):
        B, T = A.copy(), S.copy()
        getattr(B, method)()
        getattr(T, method)()
        assert B.nnz == T.nnz, method
        assert_same(B, T, xp)
        assert B.has_sorted_indices == T.has_sorted_indices
    A.sum_duplicates()
    assert A.has_canonical_format
    S.sum_duplicates()
    np.testing.assert_array_equal(np.asarray(A.indices.tolist()), S.indices)


def test_clean_up_in_place_keeps_twins_consistent(rng):
    A, S = random_pair(rng, (6, 6), np.float64, np)
    T = A.T  # cached derived data must not survive an in-place change
    A.sum_duplicates()
    assert A.T is not T
    assert_same(A.T, S.T.tocsr(), np)


def test_constructor_forms(xp, rng):
    A, S = random_pair(rng, (5, 4), np.float64, xp)
    S.sum_duplicates()
    dense = S.toarray()
    forms = {
        "triplet": CSRMatrix((xp.asarray(S.data), xp.asarray(S.indices), xp.asarray(S.indptr)), shape=S.shape),
        "four_args": CSRMatrix(xp.asarray(S.data), xp.asarray(S.indices), xp.asarray(S.indptr), S.shape),
        "dense": CSRMatrix(xp.asarray(dense)),
        "dense_dtype": CSRMatrix(xp.asarray(dense), dtype=np.complex64),
        "coo": CSRMatrix((xp.asarray(S.tocoo().data), (xp.asarray(S.tocoo().coords[0]),
                                                       xp.asarray(S.tocoo().coords[1]))), shape=S.shape),
        "csrmatrix": CSRMatrix(A),
        "copy": CSRMatrix(A, copy=True),
    }
    for name, M in forms.items():
        want = S.astype(np.complex64) if name == "dense_dtype" else S
        try:
            assert_same(M, want, xp)
        except AssertionError as exc:
            raise AssertionError(f"{name}: {exc}") from None
    inferred = CSRMatrix((S.data, S.indices, S.indptr))
    assert inferred.shape == sp.csr_array((S.data, S.indices, S.indptr)).shape
    empty = CSRMatrix((3, 0))
    assert empty.shape == (3, 0) and empty.dtype == np.float64 and empty.nnz == 0
    assert CSRMatrix((2, 2), dtype=np.int32).dtype == np.int32
    with pytest.raises(InputError):
        CSRMatrix(xp.ones(3))
    with pytest.raises(InputError):
        CSRMatrix(S, shape=(9, 9))


def test_constructor_from_scipy_and_cupyx(xp, rng):
    _, S = random_pair(rng, (6, 3), np.complex128, np)
    if xp is np:
        source = S
    else:
        import cupyx.scipy.sparse as csp

        source = csp.csr_matrix(S)
    assert_same(CSRMatrix(source), S, xp)
    assert_same(CSRMatrix(sp.coo_array(S)), S, np)


def test_python_protocols(rng):
    A, S = random_pair(rng, (5, 5), np.float64, np)
    with pytest.raises(TypeError, match="ambiguous"):
        len(A)
    with pytest.raises(ValueError):
        bool(A)
    assert bool(CSRMatrix(np.ones((1, 1))))
    assert np.shape(A) == (5, 5) and np.ndim(A) == 2
    assert "spla.CSRMatrix 5x5" in repr(A)


def test_dir_lists_the_lazy_api():
    names = dir(spla)
    for name in ("load", "spmv", "spmm", "linalg", "pagerank", "CSRMatrix", "as_csr", "InputError"):
        assert name in names


@settings(max_examples=25, derandomize=True, deadline=None)
@given(m=st.integers(0, 9), k=st.integers(0, 9), n=st.integers(0, 9), seed=st.integers(0, 2**16),
       dtypes=st.sampled_from(PAIRS))
def test_spgemm_and_sums_property(m, k, n, seed, dtypes):
    rng = np.random.default_rng(seed)
    A, S = random_pair(rng, (m, k), dtypes[0], np)
    B, T = random_pair(rng, (k, n), dtypes[1], np)
    assert_same(A @ B, S @ T, np)
    C, U = random_pair(rng, (m, k), dtypes[1], np)
    assert_same(A + C, S + U, np)
    assert_same(A.multiply(C), S.multiply(U), np)


def test_spgemm_on_the_gpu_matches_scipy(xp, rng):
    A, S = random_pair(rng, (60, 40), np.float32, xp, density=0.1)
    B, T = random_pair(rng, (40, 50), np.float64, xp, density=0.1)
    assert_same(A @ B, S @ T, xp)
    C, U = random_pair(rng, (40, 30), np.complex64, xp, density=0.1)
    assert_same(A @ C, S @ U, xp)
    D, V = random_pair(rng, (40, 30), np.int32, xp, density=0.1)
    assert_same(A.astype(np.int64) @ D, S.astype(np.int64) @ V, xp)


def _canonical_pair(rng, shape, dtype, xp, density=0.1):
    _, S = random_pair(rng, shape, dtype, np, density=density)
    S.sum_duplicates()
    return CSRMatrix((xp.array(S.data), xp.array(S.indices), xp.array(S.indptr)), shape=shape), S  # no sharing


def test_spgemm_leaves_canonical_and_non_canonical_operands_alone(xp, rng):
    A, S = _canonical_pair(rng, (40, 40), np.float64, xp)
    B, T = random_pair(rng, (40, 40), np.float64, xp, density=0.1)  # duplicates, unsorted rows
    before = {name: [to_host(a).copy() for a in (M.data, M.indices, M.indptr)] for name, M in (("A", A), ("B", B))}
    for _ in range(2):  # the second round reuses what the first cached (flags, lent operands)
        assert_same(A @ A, S @ S, xp)
        assert_same(A @ B, S @ T, xp)
        assert_same(B @ A, T @ S, xp)
        assert_same(B @ B, T @ T, xp)
    for name, M in (("A", A), ("B", B)):
        for kept, now in zip(before[name], (M.data, M.indices, M.indptr)):
            np.testing.assert_array_equal(to_host(now), kept, err_msg=f"{name} changed")
    assert A.has_canonical_format and not B.has_canonical_format
    A.data *= 2  # the product reads A's current values, not a copy taken earlier
    assert_same(A @ A, (2 * S) @ (2 * S), xp)


@pytest.mark.gpu
def test_spgemm_that_cannot_fit_raises_device_memory_error(monkeypatch, rng):
    from spla import device
    from spla.errors import DeviceMemoryError

    A, _ = random_pair(rng, (50, 50), np.float64, device.require_cupy())
    monkeypatch.setattr(device, "free_device_memory", lambda: 1024)
    with pytest.raises(DeviceMemoryError):
        A @ A


@pytest.mark.gpu
@pytest.mark.parametrize("limit", ["memory", "products"])
def test_spgemm_too_big_for_one_call_goes_in_row_blocks(monkeypatch, rng, limit):
    from spla import csr_ops, device

    cupy = device.require_cupy()
    A, S = random_pair(rng, (300, 200), np.float64, cupy, density=0.05)  # duplicates: copies summed
    B, T = _canonical_pair(rng, (200, 250), np.float64, cupy, density=0.05)
    products = csr_ops.spgemm_products(A, B)
    if limit == "memory":  # room for about a tenth of the products at a time
        monkeypatch.setattr(device, "free_device_memory",
                            lambda: 2 * csr_ops.spgemm_bytes(products // 10, 300, np.float64))
    else:
        monkeypatch.setattr(csr_ops, "_CUSPARSE_PRODUCTS", products // 7)
    cuts = []
    row_blocks = csr_ops._row_blocks
    monkeypatch.setattr(csr_ops, "_row_blocks", lambda *args: cuts.append(row_blocks(*args)) or cuts[-1])
    C = A @ B
    assert cuts and len(cuts[0]) > 5, cuts
    assert_same(C, S @ T, cupy)
    U = (S @ T).tocsr()
    U.sum_duplicates()
    C.sum_duplicates()
    # SciPy's product drops the exact zeros A's explicit zero makes; cuSPARSE keeps them as entries
    U.eliminate_zeros()
    C.eliminate_zeros()
    np.testing.assert_array_equal(to_host(C.indptr), U.indptr)
    np.testing.assert_array_equal(to_host(C.indices), U.indices)


def test_spgemm_products_count_every_pairing(rng):
    from spla import csr_ops

    A, S = random_pair(rng, (30, 20), np.float64, np, density=0.2)
    B, T = random_pair(rng, (20, 25), np.float64, np, density=0.2)
    ones = sp.csr_array((np.ones(S.nnz), S.indices, S.indptr), shape=S.shape)  # duplicates kept
    row_lengths = sp.csr_array(np.diff(T.indptr).astype(np.float64)[:, None])
    assert csr_ops.spgemm_products(A, B) == int((ones @ row_lengths).sum())
    assert csr_ops.spgemm_products(CSRMatrix((30, 20)), B) == 0


def test_row_blocks_cut_within_the_budget(rng):
    from spla import csr_ops

    per_row = rng.integers(0, 9, 200)
    per_row[rng.integers(0, 200, 30)] = 0
    running = np.concatenate(([0], np.cumsum(per_row)))
    for budget in (8, 9, 20, 57, int(running[-1]), int(running[-1]) + 5):
        cuts = csr_ops._row_blocks(running, budget)
        assert cuts[0] == 0 and cuts[-1] == 200 and all(np.diff(cuts) > 0)
        assert all(running[b] - running[a] <= budget for a, b in zip(cuts[:-1], cuts[1:]))
        # greedy: the next row would have broken the budget
        assert all(running[b + 1] - running[a] > budget for a, b in zip(cuts[:-1], cuts[1:-1]))
    assert csr_ops._row_blocks(running, 7) == []  # a row of 8 products cannot fit
    if per_row.max() == 8:
        assert csr_ops._row_blocks(running, 8)


def test_structure_flags_are_cached_for_the_arrays_they_were_found_on(xp, rng):
    A, _ = random_pair(rng, (20, 20), np.float64, xp)
    assert not A.has_canonical_format
    B = A.copy()
    assert B._known_flag("canonical") is False  # a copy shares what was found
    A.sum_duplicates()  # in place: the cached answer goes with the old arrays
    assert A.has_canonical_format and A.has_sorted_indices
    assert A.astype(np.float32)._known_flag("canonical") is True
    indptr = to_host(A.indptr)
    start = int(indptr[np.flatnonzero(np.diff(indptr) >= 2)[0]])  # a row with two entries: swap them
    flipped = A.indices.copy()
    flipped[start], flipped[start + 1] = A.indices[start + 1], A.indices[start]
    A.indices = flipped  # new arrays: the flag is found again, not trusted
    assert not A.has_canonical_format and not A.has_sorted_indices


def test_scipy_solvers_accept_a_csrmatrix(rng):
    n = 40
    M = sp.random_array((n, n), density=0.1, rng=rng)
    S = (M @ M.T + n * sp.eye_array(n)).tocsr()
    A = CSRMatrix(S)
    b = rng.standard_normal(n)
    op = sla.aslinearoperator(A)
    assert op.shape == (n, n) and op.dtype == np.float64
    assert_same(op @ b, S @ b, np)
    assert_same(op.rmatvec(b), S.T @ b, np)
    x, info = sla.cg(A, b, rtol=1e-10)
    assert info == 0
    np.testing.assert_allclose(S @ x, b, rtol=1e-7, atol=1e-7)
    x, info = sla.gmres(A, b, rtol=1e-10)
    assert info == 0
    np.testing.assert_allclose(S @ x, b, rtol=1e-7, atol=1e-7)
    vals = sla.eigsh(A, k=3, which="LM", return_eigenvectors=False)
    want = sla.eigsh(S, k=3, which="LM", return_eigenvectors=False)
    np.testing.assert_allclose(np.sort(vals), np.sort(want), rtol=1e-8)
    small = A * (1.0 / n)
    assert_same(sla.expm_multiply(small, b), sla.expm_multiply(S * (1.0 / n), b), np, rtol=1e-8)
    got = sla.expm_multiply(sla.aslinearoperator(small), b, traceA=small.trace())
    assert_same(got, sla.expm_multiply(S * (1.0 / n), b), np, rtol=1e-8)


def test_complex_solve_through_scipy(rng):
    n = 30
    M = sp.random_array((n, n), density=0.2, rng=rng, dtype=np.complex128)
    S = (M @ M.conj().T + n * sp.eye_array(n)).tocsr()
    A = CSRMatrix(S)
    b = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    x, info = sla.cg(A, b, rtol=1e-10)
    assert info == 0
    np.testing.assert_allclose(S @ x, b, rtol=1e-7, atol=1e-7)
    x, info = sla.gmres(A, b, rtol=1e-10)
    assert info == 0 and x.dtype == np.complex128


def test_save_npz_is_readable_by_scipy(tmp_path, rng):
    from spla import io

    A, S = random_pair(rng, (8, 6), np.int32, np)
    path = io.save_npz(tmp_path / "m.npz", A)
    loaded = sp.load_npz(path)
    assert loaded.dtype == np.int32 and loaded.shape == (8, 6)
    np.testing.assert_array_equal(loaded.toarray(), S.toarray())
    back = spla.load(path)
    assert back.dtype == np.int32
    np.testing.assert_array_equal(back.toarray(), S.toarray())


@pytest.mark.parametrize("dense_shape", [(6, 4), (1, 4), (6, 1), (4,)], ids=str)
def test_elementwise_dense_product_of_the_gpu_path(rng, dense_shape):
    """The array code the GPU runs for A.multiply(D), run here on NumPy arrays."""
    from spla import csr_ops

    A, S = random_pair(rng, (6, 4), np.float64, np)
    D = rng.standard_normal(dense_shape)
    assert_same(csr_ops._multiply_dense(A, D), S.multiply(D), np)
    with pytest.raises(ValueError):
        csr_ops._multiply_dense(A, rng.standard_normal((3, 4)))
