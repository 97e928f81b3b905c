"""The dia kernel (kernels/spmv_dia.cu) on the GPU: SciPy's products on stencils and bands in both
dtypes and index types, the scalar kernel's bits, alpha/beta and out=, special values as CSR
gives them, a clear refusal elsewhere, and auto's choice on a large stencil (graph replay:
tests/ops/test_graph_capture_gpu.py)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import spla
from spla import CSRMatrix
from spla.errors import KernelError
from spla.io import generators
from spla.ops import spmv as ops_spmv
from spla.planning import dia
from spla.planning.spmv import describe_choice

pytestmark = pytest.mark.gpu
cupy = pytest.importorskip("cupy")

MATRICES = {
    "poisson2d": lambda: generators.poisson2d(70),
    "poisson3d": lambda: generators.poisson3d(17),
    "banded": lambda: generators.banded(3000, 30),  # 61 diagonals
    "rectangular": lambda: CSRMatrix.from_scipy(sp.diags([1.5, -2.0, 0.25, 3.0], [-3, 0, 40, 700], shape=(900, 1600),
                                                         format="csr")),
}


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64], ids=["int32", "int64"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", list(MATRICES))
def test_dia_matches_scipy_and_the_scalar_kernels_bits(rng, name, dtype, index_dtype):
    host = MATRICES[name]()
    A = CSRMatrix.from_scipy(host.to_scipy(), dtype=dtype, index_dtype=index_dtype).to_device()
    x = cupy.asarray(rng.uniform(-1, 1, A.n_cols).astype(dtype))
    out = cupy.full(A.n_rows, np.nan, dtype=dtype)
    got = spla.spmv(A, x, kernel="dia", out=out)
    assert got is out
    want = host.to_scipy().astype(np.float64) @ x.get().astype(np.float64)
    np.testing.assert_allclose(got.get(), want, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-5)
    # the same order of the same products as the thread-per-row CSR kernel
    np.testing.assert_array_equal(got.get(), spla.spmv(A, x, kernel="scalar").get())


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_alpha_beta_and_in_place(rng, dtype):
    A = generators.poisson2d(50).astype(dtype).to_device()
    S = A.to_scipy().astype(np.float64)
    x = cupy.asarray(rng.uniform(-1, 1, A.n_cols).astype(dtype))
    y = cupy.asarray(rng.uniform(-1, 1, A.n_rows).astype(dtype))
    want = 2.5 * (S @ x.get()) - 0.75 * y.get()
    np.testing.assert_allclose(spla.spmv(A, x, y, alpha=2.5, beta=-0.75, kernel="dia").get(), want, rtol=1e-5,
                               atol=1e-5)
    spla.spmv(A, x, y, alpha=2.5, beta=-0.75, kernel="dia", out=y)
    np.testing.assert_allclose(y.get(), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_palette_found_on_the_device_gives_the_values_entrys_bits(rng, monkeypatch, dtype):
    """A stencil of six coefficients runs dia's palette entry (codes found on the GPU), with the
    bits of the entry that reads the values, and ``spla info`` says so; a band of random values
    keeps the values."""
    monkeypatch.setattr(dia, "PALETTE_MIN_BYTES", 0)  # (from 38 MB otherwise)
    host = generators.poisson3d(36).astype(dtype)  # rows enough for auto to run dia
    host.data[:] = rng.choice(rng.standard_normal(5), host.nnz)
    host.data[host.indptr[100]] = np.pi  # a sixth value in one slot of 326,592: the sample misses it, a pass finds it
    x = cupy.asarray(rng.uniform(-1, 1, host.n_cols).astype(dtype))
    coded = host.to_device()
    got = spla.spmv(coded, x, kernel="dia")
    assert ops_spmv.bound_launcher(coded, "dia").entry == "_palette"
    assert dia.palette(coded, dia.structure(coded)).n_values == 6
    assert dia.structure(coded).values is None  # given back: the codes hold them
    assert describe_choice(coded)["structure"] == "7 diagonals, a byte a slot for its 6 distinct values"
    monkeypatch.setattr(dia, "PALETTE_DTYPES", ())
    plain = host.astype(dtype, copy=True).to_device()  # a device copy of its own (to_device's is cached)
    want = spla.spmv(plain, x, kernel="dia")
    assert ops_spmv.bound_launcher(plain, "dia").entry == ""
    np.testing.assert_array_equal(got.get().view(np.uint8), want.get().view(np.uint8))
    monkeypatch.setattr(dia, "PALETTE_DTYPES", ("float32", "float64"))
    band = generators.banded(3000, 30).astype(dtype).to_device()
    spla.spmv(band, cupy.ones(3000, dtype=dtype), kernel="dia")
    assert ops_spmv.bound_launcher(band, "dia").entry == "" and dia.palette(band, dia.structure(band)) is None


def test_special_values_reach_only_the_rows_that_hold_their_column():
    """x[j] = Inf or NaN reaches the rows with an entry in column j, as in CSR: padding never reads x."""
    A = generators.poisson2d(6).to_device()  # row 5's right neighbour is padding (column 6 is the next grid row)
    x = cupy.ones(A.n_cols)
    x[6], x[20] = np.inf, np.nan
    got, want = spla.spmv(A, x, kernel="dia").get(), A.to_scipy() @ x.get()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite])
    assert np.isfinite(got[5])


def test_refused_with_the_reason_and_empty_matrices_give_zeros(rng):
    A = CSRMatrix.from_scipy(sp.random(500, 500, density=0.02, format="csr", random_state=1)).to_device()
    with pytest.raises(KernelError, match=f"more than {dia.MAX_DIAGONALS} diagonals"):
        spla.spmv(A, cupy.ones(500), kernel="dia")
    E = CSRMatrix((7, 5)).to_device()
    np.testing.assert_array_equal(spla.spmv(E, cupy.ones(5), kernel="dia").get(), np.zeros(7))


def test_auto_runs_dia_on_a_large_stencil(rng):
    A = generators.poisson2d(470).to_device()  # 1.1M nonzeros
    assert describe_choice(A)["kernel"] == "dia" and isinstance(dia.structure(A), dia.Structure)
    x = cupy.asarray(rng.uniform(-1, 1, A.n_cols))
    np.testing.assert_allclose(spla.spmv(A, x).get(), A.to_scipy() @ x.get(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kernel, dtype", [("dia:1", np.float32), ("dia:2", np.float32), ("dia:4", np.float32),
                                           ("dia:1", np.float64), ("dia:2", np.float64)])
@pytest.mark.parametrize("n_rows", [1, 3, 5, 6, 7, 9, 4096 + 3])
def test_rows_a_thread_at_every_tail_and_alignment(rng, kernel, dtype, n_rows):
    """R rows a thread: the last group's rows past n_rows, x and y at offsets that are not R's
    multiple (y then written a row at a time), and alpha/beta on both of y's paths give SciPy's
    products and the scalar kernel's bits."""
    offsets = [offset for offset in (-2, 0, 1) if offset > -n_rows]
    host = sp.diags([np.arange(1.0, n_rows + 1)[:n_rows - max(-offset, 0)] * (offset + 3) for offset in offsets],
                    offsets, shape=(n_rows, n_rows + 1), format="csr")
    A = CSRMatrix.from_scipy(host, dtype=dtype).to_device()
    S = host.astype(np.float64)
    for start in (0, 1):  # aligned, and one element in: neither x nor y on R values' boundary
        x = cupy.asarray(rng.uniform(-1, 1, A.n_cols + start).astype(dtype))[start:]
        y = cupy.asarray(rng.uniform(-1, 1, A.n_rows + start).astype(dtype))[start:]
        want = 1.5 * (S @ x.get()) + 0.5 * y.get()
        got = spla.spmv(A, x, y, alpha=1.5, beta=0.5, kernel=kernel, out=y)
        assert got is y
        scale = np.abs(want).max()  # float32 rounding of terms that cancel: relative to the largest
        np.testing.assert_allclose(got.get(), want, rtol=1e-12, atol=(1e-5 if dtype == np.float32 else 1e-12) * scale)
        plain = spla.spmv(A, x, kernel=kernel, out=cupy.full(A.n_rows + start, np.nan, dtype=dtype)[start:])
        np.testing.assert_array_equal(plain.get(), spla.spmv(A, x, kernel="scalar").get())
