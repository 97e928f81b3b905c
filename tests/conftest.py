"""Shared pytest set-up: the `gpu` marker skips cleanly without CuPy or a device,
and fixtures for fresh random inputs and the optional real-matrix folder."""

from __future__ import annotations

import os
import zlib
from pathlib import Path

import numpy as np
import pytest

from spla import device

# A test never reads or writes the user's tuning cache: what auto runs must not depend on
# an earlier run (tests of the cache point SPLA_TUNE_CACHE at a temporary file themselves).
os.environ.setdefault("SPLA_TUNE_CACHE", "off")

SHARED_MATRICES = Path(os.environ.get("SPLA_SHARED_MATRICES",
                                      Path(__file__).resolve().parents[2] / "shared" / "matrices"))


def pytest_collection_modifyitems(config, items):
    if device.gpu_available():
        return
    reason = "needs CuPy and a CUDA GPU" if device._import_cupy() is None else "no CUDA device visible"
    skip = pytest.mark.skip(reason=reason)
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def rng(request):
    """A generator seeded from the test's id: the same inputs on every run, different
    inputs for different tests (and parametrisations), so a failure reproduces."""
    seed = zlib.crc32(request.node.nodeid.encode())
    return np.random.default_rng(seed)


@pytest.fixture(params=["numpy", pytest.param("cupy", marks=pytest.mark.gpu)])
def xp(request):
    """The array module of one side: NumPy (CPU backend) or CuPy (CUDA backend, marked
    ``gpu``), so one test body checks both sides against the same SciPy reference."""
    if request.param == "numpy":
        return np
    return device.require_cupy()


def to_host(a):
    """A NumPy array (or SciPy matrix) from either side, for comparison with SciPy."""
    if hasattr(a, "get") and not isinstance(a, np.ndarray):
        return a.get()
    return a


def assert_matches_scipy(got, want, *, rtol=None, atol=0.0, dtype=None):
    """``got`` (NumPy or CuPy) equals SciPy's ``want`` in shape, in dtype when ``dtype`` is
    given, and in value within a tolerance that fits the dtype (float32 ~1e-5, float64 ~1e-12)."""
    got = np.asarray(to_host(got))
    want = np.asarray(want)
    assert got.shape == want.shape, f"shape {got.shape} != {want.shape}"
    if dtype is not None:
        assert got.dtype == np.dtype(dtype), f"dtype {got.dtype} != {np.dtype(dtype)}"
    if rtol is None:
        low = np.result_type(got.dtype, np.float32)
        rtol = 1e-4 if np.finfo(low).bits <= 32 else 1e-10
    scale = max(float(np.max(np.abs(want), initial=0.0)), 1e-300)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol + rtol * scale)


def block_rows(n_block_rows: int, size: int, per_row: int, seed: int = 0):
    """A SciPy CSR matrix of dense size x size blocks, per_row a block row at block columns 2-9 apart
    (a node of ``size`` unknowns coupled to ``per_row`` nodes: rows made of runs of ``size``
    consecutive columns, none joined), each block's values drawn from 0.5-1."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    block_cols = np.cumsum(rng.integers(2, 10, (n_block_rows, per_row)), axis=1)
    block_cols += rng.integers(0, n_block_rows - 10 * per_row, (n_block_rows, 1))
    pattern = sp.csr_matrix((np.ones(block_cols.size), block_cols.ravel(), np.arange(0, block_cols.size + 1, per_row)),
                            shape=(n_block_rows, n_block_rows))
    return sp.kron(pattern, rng.uniform(0.5, 1, (size, size)), format="csr")


def short_wide(rng, n_rows: int, length: int, n_cols: int, pool: int | None = None):
    """A host CSRMatrix of n_rows rows of ``length`` distinct, sorted columns (float32): scattered over
    all n_cols, or drawn from ``pool`` columns scattered over them (each then read by many rows far
    apart): the shape auto's traffic model sends to blocked once x is past its cut."""
    from spla.csr import CSRMatrix

    if pool is None:
        columns = rng.choice(n_cols, n_rows * length, replace=False).reshape(n_rows, length)
    else:
        chosen = rng.choice(n_cols, pool, replace=False)
        columns = np.stack([rng.choice(chosen, length, replace=False) for _ in range(n_rows)])
    columns = np.sort(columns, axis=1)
    return CSRMatrix(np.ones(columns.size, np.float32), columns.ravel(), np.arange(n_rows + 1) * length,
                     (n_rows, n_cols))


@pytest.fixture
def small_l2(monkeypatch):
    """The blocked traffic model at a test's scale: an L2 of 16 KB (filled by a window of about two
    thousand float32 nonzeros) and no fixed cost of the sum's launch."""
    from spla.planning import blocked

    monkeypatch.setattr(blocked, "L2_BYTES", 16_384)
    monkeypatch.setattr(blocked, "SUM_BYTES", 0)


@pytest.fixture
def shared_matrices():
    """The folder of real SuiteSparse matrices beside the checkout, or skip."""
    if not SHARED_MATRICES.is_dir() or not any(SHARED_MATRICES.glob("*.mtx.gz")):
        pytest.skip(f"real matrices not present at {SHARED_MATRICES}")
    return SHARED_MATRICES
