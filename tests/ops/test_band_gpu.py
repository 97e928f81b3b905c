"""The band kernel (kernels/spmv_band.cu) on the GPU: SciPy's products on rows of contiguous
columns in both dtypes and index types, warp's bits at every lane width (and the entry that
rotates value loads where rows start on one L1 bank), alpha/beta and out=,
empty rows, a clear refusal elsewhere, and auto's choice on a large profile (skyline) matrix with
CG on it (graph replay: tests/ops/test_graph_capture_gpu.py)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import spla
from spla import CSRMatrix
from spla.bench import corpus
from spla.errors import KernelError
from spla.io import generators
from spla.ops import spmv as ops_spmv
from spla.planning import banks
from spla.planning.spmv import LANE_WIDTHS, describe_choice

pytestmark = pytest.mark.gpu
cupy = pytest.importorskip("cupy")


def _empty_rows_band():
    host = corpus.build("banded-random", 40_000).to_scipy().tolil()
    host[7:40, :] = 0  # empty rows among full ones
    host = host.tocsr()
    host.eliminate_zeros()
    return CSRMatrix.from_scipy(host)


def _rows_of_32() -> CSRMatrix:
    """Rows of exactly 32 consecutive columns from random first columns: every row starts on one L1
    bank (32 values are one line in float32, two in float64), so band rotates its value loads at 2, 4
    and 8 lanes (spla.planning.banks.rotates)."""
    n_rows = 3000
    first = np.random.default_rng(49).integers(0, n_rows - 32, n_rows)
    indices = (first[:, None] + np.arange(32)).ravel()
    return CSRMatrix(np.linspace(-1, 1, n_rows * 32), indices, np.arange(n_rows + 1) * 32, (n_rows, n_rows))


MATRICES = {
    "banded-random": lambda: corpus.build("banded-random", 60_000),
    "full-band": lambda: generators.banded(3000, 40),
    "empty-rows": _empty_rows_band,
    "skyline": lambda: CSRMatrix.from_scipy(sp.csr_matrix(np.triu(np.ones((300, 700))))),
    "rows-of-32": _rows_of_32,
}


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64], ids=["int32", "int64"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", list(MATRICES))
def test_band_matches_scipy_and_warps_bits(rng, name, dtype, index_dtype):
    host = MATRICES[name]()
    A = CSRMatrix.from_scipy(host.to_scipy(), dtype=dtype, index_dtype=index_dtype).to_device()
    x = cupy.asarray(rng.uniform(-1, 1, A.n_cols).astype(dtype))
    want = host.to_scipy().astype(np.float64) @ x.get().astype(np.float64)
    for lanes in LANE_WIDTHS:
        out = cupy.full(A.n_rows, np.nan, dtype=dtype)
        got = spla.spmv(A, x, kernel=f"band:{lanes}", out=out)
        assert got is out
        np.testing.assert_allclose(got.get(), want, rtol=1e-4 if dtype == np.float32 else 1e-12, atol=1e-4)
        # warp's mapping and order of sums, so its bits (from the rotated entry where it runs)
        np.testing.assert_array_equal(got.get(), spla.spmv(A, x, kernel=f"warp:{lanes}").get())
        rotated = banks.rotates(A, "band", lanes)  # (elsewhere too: at 8 lanes random row starts pile 2 of 4 rows)
        if name == "rows-of-32":
            sizes = banks.ROTATE_ITEMSIZES["band"]
            assert rotated == (np.dtype(dtype).itemsize in sizes and lanes in banks.ROTATE_LANES)
        assert ops_spmv.bound_launcher(A, f"band:{lanes}").entry == ("_rotated" if rotated else "")


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_alpha_beta_and_in_place(rng, dtype):
    A = generators.banded(2000, 9).astype(dtype).to_device()
    S = A.to_scipy().astype(np.float64)
    x = cupy.asarray(rng.uniform(-1, 1, A.n_cols).astype(dtype))
    y = cupy.asarray(rng.uniform(-1, 1, A.n_rows).astype(dtype))
    want = 2.5 * (S @ x.get()) - 0.75 * y.get()
    np.testing.assert_allclose(spla.spmv(A, x, y, alpha=2.5, beta=-0.75, kernel="band").get(), want, rtol=1e-5,
                               atol=1e-5)
    spla.spmv(A, x, y, alpha=2.5, beta=-0.75, kernel="band", out=y)
    np.testing.assert_allclose(y.get(), want, rtol=1e-5, atol=1e-5)


def test_refused_with_the_reason_and_empty_matrices_give_zeros():
    A = generators.poisson2d(30).to_device()
    with pytest.raises(KernelError, match="not one contiguous run of columns"):
        spla.spmv(A, cupy.ones(A.n_cols), kernel="band")
    E = CSRMatrix((7, 5)).to_device()
    np.testing.assert_array_equal(spla.spmv(E, cupy.ones(5), kernel="band").get(), np.zeros(7))


def _envelope(n: int, max_half: int, rng) -> sp.csr_matrix:
    """A symmetric positive definite profile (skyline) matrix: row i spans columns lo[i]..hi[i]
    with lo nondecreasing and hi[i] the last row whose span reaches back to i, so every row is one
    run of columns and the pattern is symmetric; half-widths vary, so dia would pad it ~2x."""
    lo = np.maximum.accumulate(np.maximum(np.arange(n) - rng.integers(1, max_half + 1, n), 0))
    hi = np.searchsorted(lo, np.arange(n), side="right") - 1
    lengths = hi - lo + 1
    rows = np.repeat(np.arange(n), lengths)
    cols = np.repeat(lo, lengths) + np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    off = -1.0 / (1.0 + np.abs(rows - cols))
    M = sp.csr_matrix((np.where(rows == cols, 0.0, off), (rows, cols)), shape=(n, n))
    return M + sp.diags(np.asarray(abs(M).sum(axis=1)).ravel() + 1.0)


def test_auto_runs_band_on_a_large_profile_matrix_and_cg_solves_on_it(rng):
    S = _envelope(100_000, 24, rng)
    host = CSRMatrix.from_scipy(S)
    A = host.to_device()
    assert A.nnz >= 2**20 and describe_choice(A)["kernel"] == "band"
    x = cupy.asarray(rng.uniform(-1, 1, A.n_cols))
    np.testing.assert_allclose(spla.spmv(A, x).get(), S @ x.get(), rtol=1e-12, atol=1e-12)
    # CG on it: the fused product repeats warp's mapping over A's CSR arrays
    b = cupy.asarray(rng.uniform(-1, 1, A.n_rows))
    solution, info = spla.linalg.cg(A, b, rtol=1e-10)
    assert info == 0
    assert np.linalg.norm(S @ solution.get() - b.get()) / np.linalg.norm(b.get()) < 1e-9
