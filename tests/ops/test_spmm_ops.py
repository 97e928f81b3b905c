"""spla.spmm on the CPU: A @ X against SciPy, layouts, out=, errors, and `spla spmm`."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner

import spla
from spla.cli import main
from spla.errors import InputError, KernelError

KS = (1, 2, 3, 4, 7, 8, 16, 33, 128)
TOL = {np.float32: 1e-5, np.float64: 1e-12}


def random_csr(rng, n_rows, n_cols, density=0.05, dtype=np.float64):
    A = sp.random(n_rows, n_cols, density=density, format="csr", random_state=rng, dtype=np.float64)
    return A.astype(dtype)


def check(Y, A, X, alpha=1.0, beta=0.0, Y0=None, dtype=np.float64):
    """Y against float64 SciPy, scaled by |A| @ |X| so cancellation does not fail float32."""
    A64, X64 = A.astype(np.float64), np.asarray(X, dtype=np.float64)
    ref = alpha * (A64 @ X64)
    scale = abs(alpha) * (abs(A64) @ abs(X64))
    if Y0 is not None and beta != 0:
        ref = ref + beta * np.asarray(Y0, dtype=np.float64)
        scale = scale + abs(beta) * abs(np.asarray(Y0, dtype=np.float64))
    assert Y.shape == ref.shape
    assert np.all(np.abs(Y - ref) <= TOL[dtype] * (scale + 1e-30)), np.max(np.abs(Y - ref))


# ------------------------------------------------------------------ public API
@pytest.mark.parametrize("k", KS)
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_spmm_matches_scipy(rng, k, order, dtype):
    A = random_csr(rng, 120, 90, dtype=dtype)
    X = np.asarray(rng.standard_normal((90, k)), dtype=dtype, order=order)
    Y = spla.spmm(spla.CSRMatrix.from_scipy(A), X)
    assert Y.dtype == dtype and Y.flags.c_contiguous
    check(Y, A, X, dtype=dtype)


def test_matmul_operator_and_scipy_input(rng):
    A = random_csr(rng, 50, 40)
    X = rng.standard_normal((40, 6))
    M = spla.CSRMatrix.from_scipy(A)
    check(M @ X, A, X)
    check(spla.spmm(A, X), A, X)  # a scipy matrix is accepted as it is
    assert (M @ X[:, 0]).ndim == 1  # 1-D still goes to spmv


def test_alpha_beta_and_nan_y_at_beta_zero(rng):
    A = random_csr(rng, 60, 30)
    X = rng.standard_normal((30, 5))
    Y0 = rng.standard_normal((60, 5))
    check(spla.spmm(A, X, Y0, alpha=-2.5, beta=0.75), A, X, -2.5, 0.75, Y0)
    poisoned = np.full((60, 5), np.nan)
    Y = spla.spmm(A, X, poisoned, alpha=3.0, beta=0.0)
    assert np.isfinite(Y).all()
    check(Y, A, X, 3.0)
    check(spla.spmm(A, X, np.asfortranarray(Y0), beta=1.0), A, X, 1.0, 1.0, Y0)


def test_strided_and_integer_inputs(rng):
    A = random_csr(rng, 70, 64)
    wide = rng.standard_normal((64, 20))
    check(spla.spmm(A, wide[:, 3:11]), A, wide[:, 3:11])      # row stride > k
    check(spla.spmm(A, wide[:, ::3]), A, wide[:, ::3])        # no unit stride at all
    check(spla.spmm(A, wide[::-1, :4]), A, wide[::-1, :4])    # negative stride
    ints = rng.integers(-5, 5, (64, 3))
    check(spla.spmm(A, ints), A, ints)


@pytest.mark.parametrize("shape", [(1, 1), (1, 40), (40, 1), (0, 5), (5, 0)])
def test_degenerate_shapes(rng, shape):
    A = random_csr(rng, *shape, density=0.5) if min(shape) else sp.csr_matrix(shape)
    X = rng.standard_normal((shape[1], 3))
    Y = spla.spmm(A, X)
    assert Y.shape == (shape[0], 3)
    check(Y, A, X)


def test_k_zero_gives_empty_block(rng):
    A = random_csr(rng, 8, 6)
    assert spla.spmm(A, np.zeros((6, 0))).shape == (8, 0)


@pytest.mark.parametrize("X, message", [
    (np.zeros((7, 3)), "rows"),
    (np.zeros((6, 2, 2)), "2-D"),
    (np.zeros((6, 3), dtype=complex), "real"),
    (np.array([["a"] * 3] * 6), "real"),
    (sp.random(6, 3, density=0.5, format="csr"), "dense"),
    ([[1.0] * 3] * 6, "dense"),
])
def test_bad_x_is_input_error(rng, X, message):
    A = random_csr(rng, 5, 6, density=0.5)
    with pytest.raises(InputError, match=message):
        spla.spmm(A, X)


def test_bad_y_and_scalars(rng):
    A = random_csr(rng, 5, 6, density=0.5)
    X = np.ones((6, 3))
    with pytest.raises(InputError, match="Y must have shape"):
        spla.spmm(A, X, np.ones((5, 4)), beta=1.0)
    with pytest.raises(InputError, match="Y must have shape"):
        spla.spmm(A, X, np.ones(5), beta=1.0)
    with pytest.raises(InputError, match="alpha"):
        spla.spmm(A, X, alpha="2")
    with pytest.raises(InputError, match="beta"):
        spla.spmm(A, X, beta=None)


def test_gpu_kernel_on_cpu_is_kernel_error(rng):
    A = random_csr(rng, 5, 6, density=0.5)
    with pytest.raises(KernelError, match="GPU"):
        spla.spmm(A, np.ones((6, 2)), kernel="regk")
    assert isinstance(spla.spmm(A, np.ones((6, 2)), kernel="scipy"), np.ndarray)


# ------------------------------------------------------------------------ CLI
def test_cli_spmm_json_on_cpu():
    result = CliRunner().invoke(main, ["spmm", "gen:poisson2d:32", "--k", "4", "--device", "cpu", "--order", "F",
                                       "--repeat", "2", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)["spmm"]
    assert report["k"] == 4 and report["order"] == "F" and report["device"] == "cpu"
    anchor, row = report["rows"]  # SciPy's call, then spla's CPU SpMM (the same bits)
    assert anchor["kernel"] == "scipy" and row["kernel"] == "auto"
    assert row["ok"] and row["error"] < 1e-6 and row["error"] == anchor["error"]
    assert row["speedup_vs_spmvs"] > 0 and report["spmv_ms"] > 0
    assert report["flops"] == 2 * report["matrix"]["nnz"] * 4


def test_cli_spmm_table_on_cpu():
    result = CliRunner().invoke(main, ["spmm", "gen:random:300:4", "--k", "3", "--device", "cpu", "--repeat", "2"])
    assert result.exit_code == 0, result.output
    assert "vs 3 SpMVs" in result.output and "ok" in result.output


@pytest.mark.parametrize("args, message", [
    (["--kernel", "warp", "--device", "cpu"], "runs on the GPU"),
    (["--k", "0"], "0"),
    (["--k", "257"], "257"),
])
def test_cli_spmm_bad_arguments(args, message):
    result = CliRunner().invoke(main, ["spmm", "gen:poisson2d:8"] + args)
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output
