"""NaN, Inf and empty matrices through SpMV, SpMM and the solvers, like SciPy."""


from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import spla
from spla import linalg
from spla.csr import CSRMatrix

WIDE = 2**31 + 5  # a dimension no int32 can index


# ===================================================================== NaN / Inf / empty
def _special_values(rng, n):
    values = rng.standard_normal(n)
    values[rng.choice(n, size=max(1, n // 6), replace=False)] = rng.choice([np.nan, np.inf, -np.inf], n // 6 or 1)
    return values


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nan_and_inf_propagate_like_scipy(rng, dtype):
    S = sp.random(60, 45, density=0.15, format="csr", random_state=np.random.RandomState(rng.integers(2**31)))
    S.data = _special_values(rng, S.nnz)
    A = CSRMatrix.from_scipy(S, dtype=dtype)
    x = _special_values(rng, 45).astype(dtype)
    reference = S.astype(dtype) @ x
    np.testing.assert_array_equal(spla.spmv(A, x), reference)
    X = np.stack([x, x[::-1].copy(), np.ones(45, dtype)], axis=1)
    np.testing.assert_array_equal(spla.spmm(A, X), S.astype(dtype) @ X)


@pytest.mark.parametrize("shape", [(0, 0), (0, 5), (5, 0), (7, 7)])
def test_empty_matrices_give_zeros_and_never_read_y_when_beta_is_zero(shape):
    A = CSRMatrix(np.zeros(0), np.zeros(0, np.int32), np.zeros(shape[0] + 1, np.int32), shape)
    x = np.ones(shape[1])
    poisoned = np.full(shape[0], np.nan)
    y = spla.spmv(A, x, poisoned, beta=0.0)
    assert y.shape == (shape[0],) and not np.isnan(y).any() and not y.any()
    Y = spla.spmm(A, np.ones((shape[1], 3)), np.full((shape[0], 3), np.nan), beta=0.0)
    assert Y.shape == (shape[0], 3) and not np.isnan(Y).any() and not Y.any()


def test_empty_rows_are_zero():
    S = sp.csr_matrix(np.array([[0, 0, 0], [1.0, 0, 2.0], [0, 0, 0]]))
    y = spla.spmv(CSRMatrix.from_scipy(S), np.array([1.0, 5.0, 3.0]))
    np.testing.assert_array_equal(y, [0.0, 7.0, 0.0])


def _poisson(n=12):
    T = sp.diags([2.0] * n) - sp.diags([1.0] * (n - 1), 1) - sp.diags([1.0] * (n - 1), -1)
    return T.tocsr()


SOLVERS = ["cg", "bicgstab", "gmres", "minres"]
BAD_SYSTEMS = {
    "nan in b": lambda: (_poisson(), np.where(np.arange(12) == 3, np.nan, 1.0)),
    "inf in b": lambda: (_poisson(), np.where(np.arange(12) == 0, np.inf, 1.0)),
    "nan in A": lambda: (_poisson() + sp.csr_matrix(([np.nan], ([4], [4])), shape=(12, 12)), np.ones(12)),
    "zero matrix": lambda: (sp.csr_matrix((12, 12)), np.ones(12)),
    "singular": lambda: (sp.diags([1.0] * 6 + [0.0] + [1.0] * 5).tocsr(), np.ones(12)),
}


@pytest.mark.parametrize("case", list(BAD_SYSTEMS))
@pytest.mark.parametrize("method", SOLVERS)
def test_solvers_report_failure_instead_of_false_convergence(method, case):
    A, b = BAD_SYSTEMS[case]()
    calls = []
    x, info = getattr(linalg, method)(CSRMatrix.from_scipy(A), b, maxiter=10_000,
                                      callback=lambda *_: calls.append(1))
    assert info != 0, f"{method} claims to have solved a {case} system"
    if case.startswith(("nan", "inf")):
        assert info < 0, f"{method} should report the non-finite values as a breakdown, got {info}"
        assert len(calls) <= 20, f"{method} ran {len(calls)} iterations on NaN/Inf instead of stopping"


def test_block_cg_never_calls_a_nan_column_converged():
    A = CSRMatrix.from_scipy(_poisson())
    B = np.ones((12, 2))
    B[3, 0] = np.nan
    X, info = linalg.block_cg(A, B)
    assert info[0] == -1 and info[1] == 0
    np.testing.assert_allclose(_poisson() @ X[:, 1], B[:, 1], rtol=1e-4)


