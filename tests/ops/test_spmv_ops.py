"""spla.spmv's front door on both sides (one body, the xp fixture): out=, beta, SciPy's
result dtype, complex vectors, every kernel name on the GPU, mixed sides refused."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import assert_matches_scipy, to_host

import spla
from spla import CSRMatrix, InputError
from spla.planning.spmv import KERNELS, STRUCTURED_KERNELS


def _pair(rng, shape=(70, 50), density=0.1, dtype=np.float64):
    S = sp.random(*shape, density=density, random_state=rng, format="csr", dtype=np.float64)
    S.data = rng.uniform(-1, 1, S.nnz)
    return S, spla.CSRMatrix.from_scipy(S, dtype=dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_out_is_written_in_place_and_returned(xp, rng, dtype):
    S, A = _pair(rng, dtype=dtype)
    x = xp.asarray(rng.uniform(-1, 1, A.n_cols).astype(dtype))
    out = xp.full(A.n_rows, np.nan, dtype=dtype)
    result = spla.spmv(A, x, out=out)
    assert result is out
    assert_matches_scipy(out, S.astype(dtype) @ to_host(x).astype(np.float64), dtype=dtype)


def test_beta_reads_y_and_out_may_be_y(xp, rng):
    S, A = _pair(rng)
    x = xp.asarray(rng.uniform(-1, 1, A.n_cols))
    y0 = rng.uniform(-1, 1, A.n_rows)
    y = xp.asarray(y0.copy())
    fresh = spla.spmv(A, x, y, alpha=2.0, beta=0.5)
    assert_matches_scipy(fresh, 2.0 * (S @ to_host(x)) + 0.5 * y0)
    assert_matches_scipy(y, y0)  # y is read, not written, unless it is out
    spla.spmv(A, x, y, alpha=2.0, beta=0.5, out=y)
    assert_matches_scipy(y, 2.0 * (S @ to_host(x)) + 0.5 * y0)


def test_result_dtype_follows_scipy(xp, rng):
    S, A = _pair(rng, dtype=np.float32)
    x64 = rng.uniform(-1, 1, A.n_cols)
    want = S.astype(np.float32) @ x64
    assert want.dtype == np.float64
    assert_matches_scipy(spla.spmv(A, xp.asarray(x64)), want, dtype=np.float64)
    x32 = x64.astype(np.float32)
    assert_matches_scipy(spla.spmv(A, xp.asarray(x32)), S.astype(np.float32) @ x32, dtype=np.float32)


def test_a_complex_vector_keeps_its_imaginary_part(xp, rng):
    S, A = _pair(rng)
    x = rng.uniform(-1, 1, A.n_cols) + 1j * rng.uniform(-1, 1, A.n_cols)
    assert_matches_scipy(spla.spmv(A, xp.asarray(x)), S @ x, dtype=np.complex128)


def test_mixed_sides_and_bad_out_are_input_errors(xp, rng):
    _, A = _pair(rng)
    x = xp.ones(A.n_cols)
    with pytest.raises(InputError, match="out must be a contiguous float64"):
        spla.spmv(A, x, out=xp.empty(A.n_rows, dtype=np.float32))
    with pytest.raises(InputError, match="length"):
        spla.spmv(A, xp.ones(A.n_cols + 1))
    if xp is not np:
        with pytest.raises(InputError, match="split between host"):
            spla.spmv(A, x, out=np.empty(A.n_rows))


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", [k for k in KERNELS if k != "tune"] + ["cusparse:1", "cusparse:2"])
def test_every_kernel_name_writes_out_on_the_gpu(rng, kernel):
    import cupy

    if kernel in STRUCTURED_KERNELS:  # a band: dia and band both take it
        S = sp.diags([rng.uniform(1, 2, 200), rng.uniform(-1, 1, 200)], [0, 1], shape=(200, 300), format="csr")
        A = CSRMatrix.from_scipy(S)
    else:
        S, A = _pair(rng, shape=(300, 200), density=0.05)
    x = rng.uniform(-1, 1, A.n_cols)
    out = cupy.full(A.n_rows, np.nan)
    assert spla.spmv(A, cupy.asarray(x), kernel=kernel, out=out) is out
    assert_matches_scipy(out, S @ x)
