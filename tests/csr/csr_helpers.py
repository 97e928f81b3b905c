"""Random (non-canonical) CSR inputs and a SciPy comparison for the CSRMatrix surface tests."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from conftest import assert_matches_scipy, to_host

from spla import CSRMatrix, device

SHAPES = [(0, 4), (4, 0), (1, 1), (7, 5), (12, 12)]
DTYPES = [np.bool_, np.int32, np.int64, np.float32, np.float64, np.complex64, np.complex128]


def random_values(rng, size, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(size) > 0.3
    if dtype.kind in "iu":
        return rng.integers(-4, 5, size).astype(dtype)
    values = rng.standard_normal(size)
    if dtype.kind == "c":
        values = values + 1j * rng.standard_normal(size)
    return values.astype(dtype)


def random_pair(rng, shape, dtype, xp, density=0.35):
    """(CSRMatrix on xp's side, the same arrays as a SciPy csr_array): duplicates, unsorted
    columns and explicit zeros included, so neither side can rely on canonical input."""
    m, n = shape
    count = int(density * m * n) + (3 if m and n else 0)
    rows = np.sort(rng.integers(0, m, count)) if m and n else np.zeros(0, np.int64)
    cols = rng.integers(0, n, count) if m and n else np.zeros(0, np.int64)
    data = random_values(rng, count, dtype)
    if count > 2:
        data[0] = 0  # one explicit zero
    indptr = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=m), out=indptr[1:])
    S = sp.csr_array((data, cols.astype(np.int32), indptr.astype(np.int32)), shape=shape)
    A = CSRMatrix((xp.array(data), xp.asarray(cols), xp.asarray(indptr)), shape=shape)  # no sharing with S
    return A, S


def assert_same(got, want, xp, rtol=None, atol=0.0):
    """``got`` from spla equals SciPy's ``want`` in kind, shape, dtype and values, on xp's side
    (``atol`` for results that cancel: rounding then scales with the terms, not the result)."""
    gpu = xp is not np
    if sp.issparse(want) and want.ndim == 2:
        assert isinstance(got, CSRMatrix), f"expected a CSRMatrix, got {type(got).__name__}"
        assert got.on_gpu == gpu
        got.validate()
        got, want = got.toarray(), want.toarray()
    elif sp.issparse(want):  # SciPy's 1-D sparse results come back dense from spla
        want = want.toarray()
    if isinstance(want, np.ndarray) and want.ndim:
        assert device.is_cupy_array(got) == gpu, f"result on the wrong side: {type(got).__name__}"
    got_host = np.asarray(to_host(got))
    want = np.asarray(want)
    assert got_host.shape == want.shape, f"shape {got_host.shape} != {want.shape}"
    assert got_host.dtype == want.dtype, f"dtype {got_host.dtype} != {want.dtype}"
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got_host, want)
    else:
        assert_matches_scipy(got_host, want, rtol=rtol, atol=atol)


def check(op, A, S, xp, rtol=None, atol=0.0):
    """op on spla and on SciPy: the same result, or the same kind of error."""
    try:
        want = op(S.copy(), np)  # SciPy canonicalises its operand in place
    except Exception as exc:  # SciPy refuses: spla refuses with the same exception type
        try:
            op(A, xp)
        except type(exc):
            return
        raise AssertionError(f"SciPy raised {type(exc).__name__}({exc}); spla did not") from None
    assert_same(op(A, xp), want, xp, rtol=rtol, atol=atol)
