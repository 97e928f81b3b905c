"""The rle kernel (kernels/spmv_rle.cu) on the GPU: SciPy's products on rows of runs in both
dtypes and index types, warp's bits at every lane width, alpha/beta and out=, empty and unsorted
rows, any matrix when asked by name, and auto's choice on large blocks with CG on them (graph
replay: tests/ops/test_graph_capture_gpu.py)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import block_rows

import spla
from spla import CSRMatrix
from spla.bench import corpus
from spla.io import generators
from spla.ops import spmv as ops_spmv
from spla.planning import banks, rle
from spla.planning.spmv import LANE_WIDTHS, describe_choice

pytestmark = pytest.mark.gpu
cupy = pytest.importorskip("cupy")


def _with_empty_and_unsorted_rows() -> CSRMatrix:
    S = block_rows(800, 5, 4).tolil()
    S[30:90, :] = 0
    S = S.tocsr()
    S.eliminate_zeros()
    order = np.arange(S.nnz)
    order[S.indptr[200]:S.indptr[201]] = order[S.indptr[200]:S.indptr[201]][::-1]  # a row out of order
    return CSRMatrix(S.data[order], S.indices[order], S.indptr, S.shape)


def _rows_of_32() -> CSRMatrix:
    """Rows of exactly 32 entries in two runs of 16: in float32 every row starts on one L1 bank, so
    rle rotates its value loads at 2, 4 and 8 lanes (spla.planning.banks.rotates)."""
    n_rows = 3000
    rng = np.random.default_rng(48)
    starts = np.stack([rng.integers(0, 70, n_rows), rng.integers(75, 145, n_rows)], axis=1) * 20
    indices = (starts[:, :, None] + np.arange(16)).reshape(n_rows, 32).ravel()
    return CSRMatrix(np.linspace(-1, 1, n_rows * 32), indices, np.arange(n_rows + 1) * 32, (n_rows, n_rows))


MATRICES = {
    "block-sparse": lambda: corpus.build("block-sparse", 60_000),
    "blocks-3": lambda: CSRMatrix.from_scipy(block_rows(3000, 3, 6)),
    "empty-and-unsorted-rows": _with_empty_and_unsorted_rows,
    "scattered": lambda: generators.random(4000, 12),  # runs of one: slower than warp, still right
    "rows-of-32": _rows_of_32,
}


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64], ids=["int32", "int64"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", list(MATRICES))
def test_rle_matches_scipy_and_warps_bits(rng, name, dtype, index_dtype):
    host = MATRICES[name]()
    A = CSRMatrix(host.data.astype(dtype), host.indices.astype(index_dtype), host.indptr.astype(index_dtype),
                  host.shape).to_device()
    x = cupy.asarray(rng.uniform(-1, 1, A.n_cols).astype(dtype))
    want = host.to_scipy().astype(np.float64) @ x.get().astype(np.float64)
    for lanes in LANE_WIDTHS:
        out = cupy.full(A.n_rows, np.nan, dtype=dtype)
        got = spla.spmv(A, x, kernel=f"rle:{lanes}", out=out)
        assert got is out
        np.testing.assert_allclose(got.get(), want, rtol=1e-4 if dtype == np.float32 else 1e-12, atol=1e-4)
        # warp's mapping and order of sums, so its bits (from the rotated entry where it runs)
        np.testing.assert_array_equal(got.get(), spla.spmv(A, x, kernel=f"warp:{lanes}").get())
        rotated = banks.rotates(A, "rle", lanes)  # (elsewhere too: at 8 lanes random row starts pile 2 of 4 rows)
        if name == "rows-of-32":
            sizes = banks.ROTATE_ITEMSIZES["rle"]
            assert rotated == (np.dtype(dtype).itemsize in sizes and lanes in banks.ROTATE_LANES)
        assert ops_spmv.bound_launcher(A, f"rle:{lanes}").entry == ("_rotated" if rotated else "")


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_alpha_beta_and_in_place(rng, dtype):
    S = block_rows(1000, 4, 5)
    A = CSRMatrix.from_scipy(S, dtype=dtype).to_device()
    x = cupy.asarray(rng.uniform(-1, 1, A.n_cols).astype(dtype))
    y = cupy.asarray(rng.uniform(-1, 1, A.n_rows).astype(dtype))
    want = 2.5 * (S @ x.get().astype(np.float64)) - 0.75 * y.get()
    np.testing.assert_allclose(spla.spmv(A, x, y, alpha=2.5, beta=-0.75, kernel="rle").get(), want, rtol=1e-4,
                               atol=1e-4)
    spla.spmv(A, x, y, alpha=2.5, beta=-0.75, kernel="rle", out=y)
    np.testing.assert_allclose(y.get(), want, rtol=1e-4, atol=1e-4)
    E = CSRMatrix((7, 5)).to_device()
    np.testing.assert_array_equal(spla.spmv(E, cupy.ones(5), kernel="rle").get(), np.zeros(7))


def test_auto_runs_rle_on_large_blocks_and_cg_solves_on_them(rng, monkeypatch):
    B = block_rows(2000, 16, 2, seed=3)  # 32,000 rows: runs of 16 and more in B B^T
    S = (B @ B.T + sp.identity(B.shape[0], format="csr")).tocsr()
    S.sort_indices()
    monkeypatch.setattr(rle, "AUTO_MIN_NNZ", S.nnz)  # (auto's size floor, 10M, kept out of a test's time)
    A = CSRMatrix.from_scipy(S).to_device()
    assert rle.mean_run(A) >= rle.AUTO_MIN_RUN
    choice = describe_choice(A)
    assert choice["kernel"] == "rle", choice
    x = cupy.asarray(rng.uniform(-1, 1, A.n_cols))
    np.testing.assert_allclose(spla.spmv(A, x).get(), S @ x.get(), rtol=1e-12, atol=1e-10)
    # CG on it: the fused product repeats warp's mapping over A's CSR arrays
    b = cupy.asarray(rng.uniform(-1, 1, A.n_rows))
    solution, info = spla.linalg.cg(A, b, rtol=1e-10, maxiter=5000)
    assert info == 0
    assert np.linalg.norm(S @ solution.get() - b.get()) / np.linalg.norm(b.get()) < 1e-9
