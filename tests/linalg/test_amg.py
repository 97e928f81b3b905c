"""spla.linalg.amg against pyamg: the same hierarchy, the same cycle, on both sides."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import to_host
from precond_systems import anisotropic2d, jumping2d, poisson2d, poisson3d

from spla import CSRMatrix
from spla.errors import InputError
from spla.linalg import amg, amg_solve, cg

pyamg = pytest.importorskip("pyamg")


def _reference(A, **options):
    """pyamg's own solver for the same options as spla.linalg.amg(A, **options)."""
    M = amg(A, **options)
    smoother = M.pyamg_smoother()
    extra = {k: v for k, v in options.items() if k not in ("cycle", "smoother", "smoother_options")}
    ml = pyamg.smoothed_aggregation_solver(sp.csr_matrix(A), presmoother=smoother, postsmoother=smoother,
                                           coarse_solver="pinv", **extra)
    return M, ml


@pytest.mark.parametrize("make,options", [
    (lambda: poisson2d(40), {}),
    (lambda: poisson3d(12), {"max_coarse": 50}),
    (lambda: anisotropic2d(40), {"strength": ("symmetric", {"theta": 0.25})}),
    (lambda: jumping2d(32), {"aggregate": "naive", "max_levels": 3}),
])
def test_hierarchy_matches_pyamg(make, options):
    A = make()
    M, ml = _reference(A, **options)
    assert M.level_sizes() == [level.A.shape[0] for level in ml.levels]
    assert M.operator_complexity() == pytest.approx(ml.operator_complexity(), rel=1e-12)
    assert M.levels == len(ml.levels) >= 2


@pytest.mark.parametrize("smoother", ["jacobi", "chebyshev"])
@pytest.mark.parametrize("cycle", ["V", "W"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_one_cycle_equals_pyamgs_cycle(xp, rng, smoother, cycle, dtype):
    A = poisson2d(30)
    M = amg(A, cycle=cycle, smoother=smoother, smoother_options={"iterations": 2})
    v = rng.standard_normal(A.shape[0])
    want = M.ml.aspreconditioner(cycle=cycle) @ v  # pyamg's cycle with the same smoother, float64
    got = M.matvec(xp.asarray(v.astype(dtype)))
    assert type(got) is type(xp.asarray(v)) and got.dtype == dtype
    tolerance = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(to_host(got), want, rtol=0, atol=tolerance * np.abs(want).max())


def test_stationary_solve_takes_pyamgs_cycles(xp):
    A = poisson2d(32)
    b = np.ones(A.shape[0])
    M = amg(A)
    residuals: list = []
    want = M.ml.solve(b, x0=np.zeros_like(b), tol=1e-8, maxiter=50, residuals=residuals)
    seen: list = []
    x, info = M.solve(xp.asarray(b), rtol=1e-8, maxiter=50, callback=lambda xk: seen.append(1))
    assert info == 0
    assert len(seen) == len(residuals) - 1  # pyamg records the initial residual too
    np.testing.assert_allclose(to_host(x), want, rtol=1e-9, atol=1e-12)
    assert np.linalg.norm(b - A @ to_host(x)) <= 1e-8 * np.linalg.norm(b)


def test_amg_cg_iterations_close_to_pyamg_accelerated(xp):
    A = anisotropic2d(48)
    b = np.ones(A.shape[0])
    counts = [0]
    x, info = amg_solve(CSRMatrix.from_scipy(A), xp.asarray(b), rtol=1e-8,
                        callback=lambda xk: counts.__setitem__(0, counts[0] + 1))
    assert info == 0
    assert np.linalg.norm(b - A @ to_host(x)) <= 1e-8 * np.linalg.norm(b) * 1.01
    # pyamg's hierarchy as SciPy's CG preconditioner: pyamg's own krylov.cg breaks on SciPy 1.18
    # (make_system returns four values there, pyamg 5.2.1 expects five)
    M = amg(A)
    reference = [0]
    _, ref_info = sp.linalg.cg(A, b, rtol=1e-8, M=M.ml.aspreconditioner(cycle="V"),
                               callback=lambda xk: reference.__setitem__(0, reference[0] + 1))
    assert ref_info == 0
    assert counts[0] <= 1.5 * reference[0] + 1
    plain = [0]
    cg(A, b, rtol=1e-8, callback=lambda xk: plain.__setitem__(0, plain[0] + 1))
    assert counts[0] < plain[0] / 3


def test_accel_solve_and_block_rhs(xp, rng):
    A = poisson3d(10)
    M = amg(A, smoother="chebyshev")
    b = rng.standard_normal(A.shape[0])
    x, info = M.solve(xp.asarray(b), rtol=1e-9, accel="cg")
    assert info == 0
    np.testing.assert_allclose(to_host(x), sp.linalg.spsolve(A.tocsc(), b), rtol=1e-6, atol=1e-8)
    B = rng.standard_normal((A.shape[0], 3))
    Y = M @ xp.asarray(B)
    assert Y.shape == B.shape
    np.testing.assert_allclose(to_host(Y)[:, 1], to_host(M @ xp.asarray(B[:, 1])), rtol=1e-12, atol=1e-14)


def test_solvers_check_every_iteration_under_amg(xp):
    """An AMG cycle costs far more than a convergence check: under M=amg the solvers' GPU default of
    a check every DEFAULT_GPU_CHECK_EVERY iterations gives way to every iteration, so none runs
    past convergence; without M the default stays."""
    from spla.linalg._system import DEFAULT_GPU_CHECK_EVERY, make_system

    A = CSRMatrix.from_scipy(poisson2d(24))
    b = xp.ones(A.n_rows)
    M = amg(A, setup="spla")
    assert make_system(A, b, M=M).check_every == 1
    assert make_system(A, b).check_every == (1 if xp is np else DEFAULT_GPU_CHECK_EVERY)
    assert make_system(A, b, M=M, check_every=4).check_every == 4
    seen: list = []
    x, info = cg(A, b, rtol=1e-8, M=M, callback=lambda xk: seen.append(1))
    reference = [0]
    cg(A, to_host(b), rtol=1e-8, M=M, callback=lambda xk: reference.__setitem__(0, reference[0] + 1))
    assert info == 0 and len(seen) == reference[0]  # the GPU stops where the CPU (checking every time) does


def test_a_matrix_below_max_coarse_is_one_dense_solve(rng):
    A = poisson2d(3)
    M = amg(A)
    assert M.levels == 1
    b = rng.standard_normal(A.shape[0])
    np.testing.assert_allclose(M @ b, np.linalg.solve(A.toarray(), b), rtol=1e-10)


@pytest.mark.parametrize("kwargs,match", [
    ({"cycle": "F"}, "cycle"),
    ({"smoother": "gauss_seidel"}, "smoother"),
    ({"smoother_options": {"sweep": "forward"}}, "unknown jacobi smoother options"),
    ({"presmoother": "jacobi"}, "presmoother"),
])
def test_bad_options_are_input_errors(kwargs, match):
    with pytest.raises(InputError, match=match):
        amg(poisson2d(8), **kwargs)


def test_non_square_and_bad_accel():
    with pytest.raises(InputError, match="square"):
        amg(sp.random(5, 6, density=0.5, format="csr"))
    M = amg(poisson2d(8))
    with pytest.raises(InputError, match="accel"):
        M.solve(np.ones(64), accel="qmr")
    with pytest.raises(InputError, match="length"):
        M.solve(np.ones(63))
