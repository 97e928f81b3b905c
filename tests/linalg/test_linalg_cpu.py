"""spla.linalg against scipy.sparse.linalg on a catalogue of named systems (CPU)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as sla

from spla import CSRMatrix, InputError, linalg
from spla.io import generators


def _poisson2d():
    return generators.poisson2d(24).to_scipy()


def _poisson3d_small():
    return generators.poisson3d(8).to_scipy()


def _random_spd():
    rng = np.random.default_rng(3)
    B = sp.random(300, 300, density=0.02, random_state=rng, format="csr")
    return (B @ B.T + sp.identity(300) * 1.0).tocsr()


def _convection_diffusion():
    n = 20  # upwind 2-D convection-diffusion: nonsymmetric, diagonally dominant
    T = sp.diags([-1.0 - 0.6, 2.0, -1.0 + 0.6], [-1, 0, 1], shape=(n, n))
    I = sp.identity(n)
    return (sp.kron(I, T) + sp.kron(T, I)).tocsr()


def _indefinite():
    A = generators.poisson2d(16).to_scipy()
    return (A - 1.5 * sp.identity(A.shape[0])).tocsr()  # eigenvalues on both sides of 0


SYSTEMS = {
    "poisson2d": (_poisson2d, True),
    "poisson3d-small": (_poisson3d_small, True),
    "random-spd": (_random_spd, True),
    "convdiff": (_convection_diffusion, False),
    "indefinite": (_indefinite, False),
}
# Methods each system is meant for (cg/minres need symmetry, cg also definiteness)
APPLIES = {
    "cg": lambda name: name in ("poisson2d", "poisson3d-small", "random-spd"),
    "minres": lambda name: name != "convdiff",
    "bicgstab": lambda name: True,
    "gmres": lambda name: True,
}
DTYPES = {"float64": np.float64, "float32": np.float32}
RTOL = {"float64": 1e-8, "float32": 1e-4}


def _cases():
    for name in SYSTEMS:
        for dname in DTYPES:
            for method in ("cg", "bicgstab", "gmres", "minres"):
                if APPLIES[method](name):
                    yield pytest.param(name, dname, method, id=f"{name}-{dname}-{method}")


def _system(name, dname):
    A = SYSTEMS[name][0]().astype(DTYPES[dname])
    b = np.random.default_rng(7).standard_normal(A.shape[0]).astype(DTYPES[dname])
    return A, b


def _count(kind="x"):
    calls = []
    return calls, (lambda arg: calls.append(arg))


def _scipy_reference_count(A, b, method, rtol):
    """SciPy's iterations to rtol; for minres (SciPy stops on a different rule) the first iterate
    whose true residual meets ||r|| < rtol ||b||, found by running SciPy's minres further."""
    if method == "minres":
        bnorm = np.linalg.norm(b)
        residuals = []
        sla.minres(A, b, rtol=1e-14, maxiter=5 * A.shape[0],
                   callback=lambda xk: residuals.append(np.linalg.norm(b - A @ xk)))
        hits = [i + 1 for i, r in enumerate(residuals) if r < rtol * bnorm]
        return (hits[0] if hits else None), 0 if hits else 1
    calls, cb = _count()
    kwargs = {"callback_type": "pr_norm"} if method == "gmres" else {}
    _, info = getattr(sla, method)(A, b, rtol=rtol, callback=cb, **kwargs)
    return len(calls), info


@pytest.mark.parametrize("name, dname, method", list(_cases()))
def test_solver_matches_scipy(name, dname, method):
    A, b = _system(name, dname)
    rtol = RTOL[dname]
    calls, cb = _count()
    kwargs = {"callback_type": "pr_norm"} if method == "gmres" else {}
    x, info = getattr(linalg, method)(A, b, rtol=rtol, callback=cb, **kwargs)
    assert x.dtype == np.dtype(DTYPES[dname]) and isinstance(x, np.ndarray)
    reference_count, reference_info = _scipy_reference_count(A, b, method, rtol)
    assert (info == 0) == (reference_info == 0), f"spla info {info}, scipy info {reference_info}"
    if info == 0:
        A64 = A.astype(np.float64)
        residual = np.linalg.norm(b - A64 @ x) / np.linalg.norm(b)
        slack = 1.01 if dname == "float64" else 10.0  # float32: the updated residual drifts from the true one
        assert residual <= rtol * slack
        # error consistent with the tolerance: ||x - x*|| <= cond-bounded multiple of rtol
        exact = sla.spsolve(A64.tocsc(), b.astype(np.float64))
        error = np.linalg.norm(x - exact) / np.linalg.norm(exact)
        cond_estimate = np.linalg.cond(A64.toarray()) if A.shape[0] <= 600 else 1e6
        assert error <= cond_estimate * rtol * slack
        allowed = 2 if dname == "float64" else max(3, reference_count // 10)
        assert abs(len(calls) - reference_count) <= allowed, (len(calls), reference_count)


@pytest.mark.parametrize("method", ["cg", "bicgstab", "gmres", "minres"])
def test_x0_honoured_and_not_mutated(method):
    A, b = _system("poisson2d", "float64")
    exact = sla.spsolve(A.tocsc(), b)
    x0 = exact + 1e-3 * np.random.default_rng(1).standard_normal(b.shape)
    kept = x0.copy()
    calls_cold, cb_cold = _count()
    calls_warm, cb_warm = _count()
    kwargs = {"callback_type": "x"} if method == "gmres" else {}
    x_cold, info_cold = getattr(linalg, method)(A, b, rtol=1e-8, callback=cb_cold, **kwargs)
    x_warm, info_warm = getattr(linalg, method)(A, b, x0=x0, rtol=1e-8, callback=cb_warm, **kwargs)
    assert info_cold == 0 and info_warm == 0
    assert np.array_equal(x0, kept)
    assert x_warm is not x0
    assert len(calls_warm) < len(calls_cold) or method == "gmres"
    # an exact x0 returns at once without iterating
    calls, cb = _count()
    x, info = getattr(linalg, method)(A, b, x0=exact, rtol=1e-6, callback=cb, **kwargs)
    assert info == 0 and calls == [] and np.allclose(x, exact)


@pytest.mark.parametrize("method", ["cg", "bicgstab", "minres"])
def test_maxiter_honoured(method):
    A, b = _system("poisson2d", "float64")
    calls, cb = _count()
    x, info = getattr(linalg, method)(A, b, rtol=1e-12, maxiter=5, callback=cb)
    assert info == 5 and len(calls) == 5
    _, reference = getattr(sla, method)(A, b, rtol=1e-12, maxiter=5)
    assert reference == 5


def test_gmres_maxiter_counts_restart_cycles():
    A, b = _system("convdiff", "float64")
    calls, cb = _count()
    x, info = linalg.gmres(A, b, rtol=1e-12, restart=5, maxiter=3, callback=cb, callback_type="x")
    _, reference = sla.gmres(A, b, rtol=1e-12, restart=5, maxiter=3)
    assert info == reference == 3 and len(calls) == 3


def test_callback_receives_the_iterate():
    A, b = _system("poisson2d", "float64")
    seen = []
    x, info = linalg.cg(A, b, rtol=1e-6, callback=lambda xk: seen.append(xk.copy()))
    assert np.array_equal(seen[-1], x)
    reference = []
    sla.cg(A, b, rtol=1e-6, callback=lambda xk: reference.append(xk.copy()))
    np.testing.assert_allclose(seen[0], reference[0], rtol=1e-12)


def test_cg_breakdown_on_singular_direction():
    A = sp.csr_matrix(np.array([[0.0, 1.0], [1.0, 0.0]]))
    b = np.array([1.0, 0.0])  # p.Ap = 0 at the first step
    x, info = linalg.cg(A, b)
    assert info == -1 and np.all(np.isfinite(x))
    with np.errstate(divide="ignore", invalid="ignore"):
        _, reference = sla.cg(A, b, maxiter=5)
    assert reference != 0  # SciPy does not converge either (it reports maxiter with NaNs)


# BiCGSTAB breakdowns in exact (dyadic) arithmetic, so every machine and summation order agrees:
# with b = e1, r~ = r0 = e1, v = A e1 is A's first column.
BICGSTAB_BREAKDOWNS = {
    # v = (0, 1) is orthogonal to r~: r~.v = 0 in the first step -> -11, as SciPy
    "rv": (np.array([[0.0, 1.0], [1.0, 0.0]]), -11),
    # alpha = 1/2, s = (0, 0, -1/2), t = A s = (-1, -1, 0), t.s = 0 so omega = 0 and r1 = s,
    # then rho = r~.r1 = 0: SciPy tests rho before omega -> -10
    "rho": (np.array([[2.0, 1.0, 2.0], [0.0, 1.0, 2.0], [1.0, 1.0, 0.0]]), -10),
}


@pytest.mark.parametrize("case", list(BICGSTAB_BREAKDOWNS))
def test_bicgstab_breakdown_codes(case):
    dense, expected = BICGSTAB_BREAKDOWNS[case]
    A = sp.csr_matrix(dense)
    b = np.zeros(A.shape[0])
    b[0] = 1.0
    x, info = linalg.bicgstab(A, b)
    reference_x, reference = sla.bicgstab(A, b)
    assert info == reference == expected
    assert np.all(np.isfinite(x))
    np.testing.assert_array_equal(x, reference_x)  # the last x before the breakdown, as SciPy returns


def test_minres_indefinite_preconditioner_is_breakdown():
    A, b = _system("indefinite", "float64")
    M = sp.diags(-np.ones(A.shape[0]))  # negative definite M
    x, info = linalg.minres(A, b, M=M)
    assert info == -1


def test_zero_rhs_returns_zeros():
    A, _ = _system("poisson2d", "float64")
    b = np.zeros(A.shape[0])
    for method in ("cg", "bicgstab", "gmres", "minres"):
        x, info = getattr(linalg, method)(A, b)
        assert info == 0 and not x.any() and x is not b


@pytest.mark.parametrize("kind", ["csr", "scipy", "dense", "linear-operator", "spla-operator"])
def test_operator_inputs(kind):
    A, b = _system("random-spd", "float64")
    operand = {
        "csr": lambda: CSRMatrix.from_scipy(A),
        "scipy": lambda: A,
        "dense": lambda: A.toarray(),
        "linear-operator": lambda: sla.aslinearoperator(A),
        "spla-operator": lambda: linalg.aslinearoperator(CSRMatrix.from_scipy(A)),
    }[kind]()
    x, info = linalg.cg(operand, b, rtol=1e-10)
    reference, _ = sla.cg(A, b, rtol=1e-10)
    assert info == 0
    np.testing.assert_allclose(x, reference, rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("method", ["cg", "bicgstab", "gmres", "minres"])
def test_jacobi_preconditioner(method):
    rng = np.random.default_rng(5)
    A = _poisson2d()
    scale = sp.diags(rng.uniform(1, 100, A.shape[0]))
    A = (scale @ A @ scale).tocsr()  # badly scaled: Jacobi helps a lot
    b = rng.standard_normal(A.shape[0])
    M = linalg.jacobi(A)
    kwargs = {"callback_type": "pr_norm"} if method == "gmres" else {}
    calls, cb = _count()
    x, info = getattr(linalg, method)(A, b, rtol=1e-8, M=M, callback=cb, maxiter=2000, **kwargs)
    assert info == 0 and np.linalg.norm(b - A @ x) <= 1.01e-8 * np.linalg.norm(b)
    if method in ("cg", "bicgstab"):
        ref_calls, ref_cb = _count()
        _, ref_info = getattr(sla, method)(A, b, rtol=1e-8, M=sp.diags(1 / A.diagonal()), callback=ref_cb,
                                           maxiter=2000)
        assert ref_info == 0 and abs(len(calls) - len(ref_calls)) <= 2
    # the same M works as a generic LinearOperator in SciPy
    x_scipy, info_scipy = sla.cg(A, b, rtol=1e-8, M=M, maxiter=2000) if method == "cg" else (x, 0)
    assert info_scipy == 0


def test_jacobi_refuses_zero_diagonal():
    A = sp.csr_matrix(np.array([[1.0, 2.0], [3.0, 0.0]]))
    with pytest.raises(InputError, match="row 1"):
        linalg.jacobi(A)


def test_general_preconditioner_matches_jacobi():
    A, b = _system("poisson3d-small", "float64")
    x1, _ = linalg.cg(A, b, M=linalg.jacobi(A), rtol=1e-10)
    x2, _ = linalg.cg(A, b, M=sp.diags(1 / A.diagonal()), rtol=1e-10)
    np.testing.assert_allclose(x1, x2, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("bad", ["shape", "nonsquare", "complex", "tol", "check_every"])
def test_bad_input(bad):
    A, b = _system("poisson2d", "float64")
    with pytest.raises(InputError):
        if bad == "shape":
            linalg.cg(A, b[:-1])
        elif bad == "nonsquare":
            linalg.cg(A[:-1], b[:-1])
        elif bad == "complex":
            linalg.cg(A, b + 1j)
        elif bad == "tol":
            linalg.cg(A, b, atol=-1)
        else:
            linalg.cg(A, b, check_every=0)


def test_check_every_on_cpu_runs_at_most_that_many_extra():
    A, b = _system("poisson2d", "float64")
    exact_calls, cb = _count()
    linalg.cg(A, b, rtol=1e-8, callback=cb)
    late_calls, cb = _count()
    x, info = linalg.cg(A, b, rtol=1e-8, callback=cb, check_every=8)
    assert info == 0 and 0 <= len(late_calls) - len(exact_calls) < 8 and len(late_calls) % 8 == 0


# ---------------------------------------------------------------- block CG
def test_block_cg_matches_columnwise_cg():
    A, _ = _system("poisson2d", "float64")
    rng = np.random.default_rng(11)
    B = rng.standard_normal((A.shape[0], 4))
    B[:, 2] *= 1e-3  # a column that converges on a different schedule
    X, info = linalg.block_cg(A, B, rtol=1e-8)
    assert info.shape == (4,) and (info == 0).all()
    for j in range(4):
        xj, _ = sla.cg(A, B[:, j], rtol=1e-8)
        np.testing.assert_allclose(X[:, j], xj, rtol=1e-9, atol=1e-12)


def test_block_cg_per_column_info_and_x0():
    A, _ = _system("poisson2d", "float64")
    rng = np.random.default_rng(2)
    B = rng.standard_normal((A.shape[0], 3))
    B[:, 1] = 0.0
    X0 = rng.standard_normal(B.shape)
    kept = X0.copy()
    X, info = linalg.block_cg(A, B, X0=X0, rtol=1e-10, maxiter=3)
    assert list(info) == [3, 0, 3] and np.array_equal(X0, kept) and not X[:, 1].any()
    calls, cb = _count()
    X, info = linalg.block_cg(CSRMatrix.from_scipy(A), B, rtol=1e-8, M=linalg.jacobi(A), callback=cb)
    assert (info == 0).all() and len(calls) > 0
    assert np.linalg.norm(B - A @ X, axis=0).max() <= 1.01e-8 * np.linalg.norm(B, axis=0).max()
