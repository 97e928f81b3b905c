"""SciPy's dtype rules on CSRMatrix: exact astype, NumPy promotion in products, complex kept."""

from __future__ import annotations

import numpy as np
import pytest
from csr_helpers import DTYPES, assert_same, random_pair, random_values

import spla
from spla import CSRMatrix, InputError
from spla.csr import SUPPORTED_DTYPES


@pytest.mark.parametrize("source", DTYPES, ids=lambda d: np.dtype(d).name)
def test_astype_gives_exactly_the_requested_dtype(xp, rng, source):
    A, S = random_pair(rng, (6, 5), source, xp)
    for target in SUPPORTED_DTYPES:
        if np.dtype(source).kind == "c" and target.kind != "c":
            continue  # SciPy warns and drops the imaginary part; spla keeps NumPy's cast too
        B = A.astype(target)
        assert B.dtype == target
        assert_same(B, S.astype(target), xp)
    assert A.astype(A.dtype) is A
    assert A.astype(A.dtype, copy=True) is not A


@pytest.mark.parametrize("bad", ["float16", np.longdouble, "U3", object])
def test_astype_refuses_unsupported_dtypes_naming_the_supported(bad):
    A = CSRMatrix(np.eye(3))
    with pytest.raises(InputError, match="supported ones are bool, int8.*complex128"):
        A.astype(bad)
    with pytest.raises(InputError, match="does not support dtype"):
        CSRMatrix(np.eye(3), dtype=bad)


def test_load_with_dtype_is_exact(tmp_path):
    import scipy.io
    import scipy.sparse as sp

    path = tmp_path / "m.mtx"
    scipy.io.mmwrite(path, sp.random_array((6, 5), density=0.4, rng=0))
    for dtype in ("float32", "int32", "int64", "complex64", "bool"):
        assert spla.load(path, dtype=dtype, cache=False).dtype == np.dtype(dtype)
    with pytest.raises(InputError):
        spla.load(path, dtype="float16", cache=False)


@pytest.mark.parametrize("a_dtype,x_dtype,want", [
    (np.float32, np.float64, np.float64), (np.float32, np.float32, np.float32),
    (np.int32, np.float32, np.float64), (np.int32, np.int64, np.int64), (np.bool_, np.bool_, np.bool_),
    (np.float64, np.complex64, np.complex128), (np.float32, np.complex64, np.complex64),
    (np.complex64, np.float64, np.complex128)], ids=str)
def test_product_dtype_is_numpy_promotion(xp, rng, a_dtype, x_dtype, want):
    A, S = random_pair(rng, (9, 7), a_dtype, xp)
    x = random_values(rng, 7, x_dtype)
    y = A @ xp.asarray(x)
    assert y.dtype == want == (S @ x).dtype
    assert_same(y, S @ x, xp)


def test_complex_vector_into_real_matrix_keeps_the_imaginary_part(xp, rng):
    A, S = random_pair(rng, (30, 20), np.float64, xp)
    x = rng.standard_normal(20) + 1j * rng.standard_normal(20)
    y = A @ xp.asarray(x)
    assert_same(y, S @ x, xp)
    assert float(abs(y.imag).max()) > 0


def test_kernel_entry_points_refuse_complex_and_widen_integers(rng):
    A, _ = random_pair(rng, (5, 5), np.complex128, np)
    with pytest.raises(InputError, match="complex"):
        spla.spmv(A, np.ones(5))
    B = CSRMatrix(np.arange(9, dtype=np.int32).reshape(3, 3))
    assert B.dtype == np.int32
    assert spla.as_csr(B).dtype == np.float64
    assert spla.as_csr(B, dtype=np.int64).dtype == np.int64
    np.testing.assert_allclose(spla.spmv(B, np.full(3, 0.5)), B.toarray() @ np.full(3, 0.5))


def test_int_and_bool_arithmetic_is_exact(xp, rng):
    big = np.array([2**53 + 1, 3], dtype=np.int64)
    A = CSRMatrix((xp.asarray(big), xp.asarray([0, 1]), xp.asarray([0, 2])), shape=(1, 2))
    y = A @ xp.asarray(np.array([1, 1], dtype=np.int64))
    assert int(y[0]) == 2**53 + 4 and y.dtype == np.int64
    assert int((A * 2).sum()) == 2 * (2**53 + 4)
