"""Reliability on the GPU: int64 indices reach the kernels, grids past 65,535 x 1,024 rows,
NaN/Inf propagation and empty matrices through every SpMV/SpMM kernel, memory errors.

Every test is marked ``gpu`` (skipped without CuPy and a device). Kernel names come
from ``spla.planning.spmv.KERNELS`` and ``spla.planning.spmm.KERNELS``.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import spla
from spla import DeviceMemoryError, SplaError, device
from spla.backends.cuda.runtime import template
from spla.csr import CSRMatrix
from spla.ops import spmv as ops_spmv
from spla.planning import spmv as rules

pytestmark = pytest.mark.gpu

WIDE = 2**31 + 5


def _spmv_kernels():
    # dia and band run on matrices of their structure only (tests/ops/test_dia_gpu.py, test_band_gpu.py);
    # rle runs on any matrix
    return [k for k in rules.KERNELS if k not in rules.OWN_MATRICES_ONLY]


def _spmm_kernels():
    from spla.planning import spmm as spmm_planning

    return [k for k in spmm_planning.KERNELS if k not in spmm_planning.OWN_MATRICES_ONLY]


def assert_same_special_values(got, want, rtol):
    """NaN where NaN, the same signed infinities, finite values close (sums may be reordered)."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isposinf(got), np.isposinf(want))
    np.testing.assert_array_equal(np.isneginf(got), np.isneginf(want))
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=rtol, atol=rtol * max(1.0, np.abs(want[finite]).max(
        initial=0.0)))


# ------------------------------------------------------------------ int64
@pytest.mark.parametrize("kernel", _spmv_kernels() if device.gpu_available() else ["scalar"])
def test_int64_indices_reach_every_spmv_kernel(kernel):
    import cupy


    # row 2 straddles the int32 boundary: columns 2**31 - 1 and 2**31
    entries = {(0, 0): 2.0, (0, WIDE - 1): 3.0, (2, 2**31 - 1): -1.5, (2, 2**31): 4.0}
    rows, cols = zip(*entries)
    A = CSRMatrix.from_scipy(sp.csr_matrix((list(entries.values()), (rows, cols)), shape=(3, WIDE)),
                             dtype=np.float32)
    assert A.index_dtype == np.int64
    dev = A.to_device()
    assert dev.indices.dtype == cupy.int64 and dev.indptr.dtype == cupy.int64
    assert "long long" in template("spla_spmv_scalar", np.float32, dev.index_dtype)
    x = cupy.zeros(WIDE, dtype=cupy.float32)  # 8.6 GB
    x[0], x[WIDE - 1], x[2**31 - 1], x[2**31] = 10.0, 1.0, 2.0, 5.0
    try:
        y = spla.spmv(dev, x, kernel=kernel)
    except SplaError as exc:  # a library that cannot take int64 must say so, not wrap indices
        assert "int64" in str(exc) or "index" in str(exc), exc
        return
    finally:
        del x
    np.testing.assert_array_equal(y.get(), np.array([23.0, 0.0, 17.0], dtype=np.float32))


# ------------------------------------------------------------------ grid limits
ROWS_PAST_GRID_LIMIT = 67_200_000  # > 65,535 * 1,024 = 67,107,840


@pytest.fixture(scope="module")
def tall_matrix():
    """67.2M x 1024, one entry per row at column i % 1024: y[i] = x[i % 1024], exact in float32."""
    import cupy

    n = ROWS_PAST_GRID_LIMIT
    indptr = cupy.arange(n + 1, dtype=cupy.int32)
    indices = (cupy.arange(n, dtype=cupy.int32) % 1024).astype(cupy.int32)
    data = cupy.ones(n, dtype=cupy.float32)
    A = CSRMatrix(data, indices, indptr, (n, 1024))
    x = cupy.arange(1024, dtype=cupy.float32)
    expected = (cupy.arange(n, dtype=cupy.int32) % 1024).astype(cupy.float32)
    return A, x, expected


@pytest.mark.parametrize("kernel", _spmv_kernels() if device.gpu_available() else ["scalar"])
def test_spmv_past_the_65535_block_grid(tall_matrix, kernel):
    import cupy


    A, x, expected = tall_matrix
    out = cupy.full(A.n_rows, cupy.nan, dtype=cupy.float32)  # poisoned: every row must be written
    y = ops_spmv.spmv(A, x, kernel=kernel, out=out)
    wrong = int(cupy.count_nonzero(y != expected))
    first = int(cupy.argmax(y != expected)) if wrong else -1
    assert wrong == 0, f"{kernel}: {wrong} wrong rows, the first is row {first}"


# ------------------------------------------------------------------ NaN / Inf / empty
def _special(rng, n, dtype):
    values = rng.standard_normal(n)
    k = max(1, n // 6)
    values[rng.choice(n, size=k, replace=False)] = rng.choice([np.nan, np.inf, -np.inf], k)
    return values.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kernel", _spmv_kernels() if device.gpu_available() else ["scalar"])
def test_nan_inf_propagate_through_every_spmv_kernel(rng, kernel, dtype):
    import cupy

    S = sp.random(300, 200, density=0.05, format="csr", random_state=np.random.RandomState(rng.integers(2**31)))
    S.data = _special(rng, S.nnz, dtype)
    S[7] = 0  # an empty row
    S.eliminate_zeros()
    x = _special(rng, 200, dtype)
    want = S.astype(np.float64) @ x.astype(np.float64)
    got = spla.spmv(CSRMatrix.from_scipy(S, dtype=dtype), cupy.asarray(x), kernel=kernel).get()
    assert_same_special_values(got, want, 1e-4 if dtype == np.float32 else 1e-12)
    assert got[7] == 0


# spla's own kernels only: on the H200 (2026-12-02) cuSPARSE's SpMM through
# cupyx returned NaN for one element where SciPy's product is finite; that is the
# vendor anchor's behaviour, not something spla can promise for it.
@pytest.mark.parametrize("kernel", [k for k in _spmm_kernels() if not k.startswith("cusparse")]
                         if device.gpu_available() else ["regk"])
def test_nan_inf_propagate_through_every_spmm_kernel(rng, kernel):
    import cupy

    S = sp.random(300, 200, density=0.05, format="csr", random_state=np.random.RandomState(rng.integers(2**31)))
    S.data = _special(rng, S.nnz, np.float64)
    X = np.stack([_special(rng, 200, np.float64) for _ in range(8)], axis=1)
    want = S @ X
    got = spla.spmm(CSRMatrix.from_scipy(S), cupy.asarray(X), kernel=kernel).get()
    assert_same_special_values(got, want, 1e-12)


def test_nan_inf_propagate_through_spmm_over_diagonals(rng):
    """dia's SpMM on a band of special values and a special X: NaN and Inf reach the rows SciPy sends
    them to, and the padding of the diagonals (no entry) multiplies none of them."""
    import cupy

    n = 300
    S = sp.diags([_special(rng, n - abs(d), np.float64) for d in (-2, 0, 1, 5)], [-2, 0, 1, 5], format="csr")
    X = np.stack([_special(rng, n, np.float64) for _ in range(8)], axis=1)
    got = spla.spmm(CSRMatrix.from_scipy(S), cupy.asarray(X), kernel="dia").get()
    assert_same_special_values(got, S @ X, 1e-12)


@pytest.mark.parametrize("shape", [(0, 0), (0, 5), (5, 0), (7, 7)])
@pytest.mark.parametrize("kernel", _spmv_kernels() if device.gpu_available() else ["scalar"])
def test_empty_matrices_give_zeros_on_gpu(kernel, shape):
    import cupy

    A = CSRMatrix(np.zeros(0, np.float32), np.zeros(0, np.int32), np.zeros(shape[0] + 1, np.int32), shape)
    y = spla.spmv(A, cupy.ones(shape[1], dtype=cupy.float32), cupy.full(shape[0], cupy.nan, cupy.float32),
                  beta=0.0, kernel=kernel)
    assert y.shape == (shape[0],) and not bool(cupy.isnan(y).any()) and not bool(y.any())


@pytest.mark.parametrize("kernel", _spmm_kernels() if device.gpu_available() else ["regk"])
def test_empty_matrix_spmm_on_gpu(kernel):
    import cupy

    A = CSRMatrix(np.zeros(0, np.float32), np.zeros(0, np.int32), np.zeros(8, np.int32), (7, 7))
    Y = spla.spmm(A, cupy.ones((7, 4), cupy.float32), cupy.full((7, 4), cupy.nan, cupy.float32), beta=0.0,
                  kernel=kernel)
    assert Y.shape == (7, 4) and not bool(cupy.isnan(Y).any()) and not bool(Y.any())


# ------------------------------------------------------------------ memory
def test_device_memory_error_before_copying(monkeypatch):
    A = spla.load("gen:random:100000:8")
    monkeypatch.setattr(device, "free_device_memory", lambda: 1 << 20)
    with pytest.raises(DeviceMemoryError, match="--device cpu"):
        A.to_device()
    assert "device" not in A._cache


def test_gpu_solvers_report_nan_as_breakdown():
    import cupy

    T = sp.diags([2.0] * 50) - sp.diags([1.0] * 49, 1) - sp.diags([1.0] * 49, -1)
    b = cupy.ones(50)
    b[3] = cupy.nan
    for method in ("cg", "bicgstab", "gmres", "minres"):
        _, info = getattr(spla.linalg, method)(CSRMatrix.from_scipy(T.tocsr()), b)
        assert info < 0, (method, info)
