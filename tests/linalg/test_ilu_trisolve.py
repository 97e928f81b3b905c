"""ilu0 / ic0 against dense-loop references of P A P^T (natural and multicolour orderings);
spsolve_triangular and TriangularSolver (with and without a permutation) against SciPy on both sides."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import assert_matches_scipy, to_host
from precond_systems import convection_diffusion2d, graph_laplacian, poisson2d
from scipy.sparse.linalg import spsolve_triangular as scipy_solve_triangular

from spla import CSRMatrix
from spla.errors import InputError
from spla.linalg import (
    SingularTriangularError,
    TriangularSolver,
    _triangular,
    ic0,
    ilu0,
    level_sets,
    spsolve_triangular,
)
from spla.linalg._ordering import color_permutation, greedy_coloring


def dense_ilu0(A):
    """Textbook ILU(0) (IKJ, updates only on the pattern), one entry at a time."""
    a = A.toarray().astype(np.float64)
    pattern = a != 0
    n = a.shape[0]
    for i in range(1, n):
        for k in range(i):
            if pattern[i, k]:
                a[i, k] /= a[k, k]
                for j in range(k + 1, n):
                    if pattern[i, j]:
                        a[i, j] -= a[i, k] * a[k, j]
    return np.tril(a, -1), np.triu(a)


def dense_ic0(A):
    """Textbook IC(0): column Cholesky keeping only A's lower pattern."""
    a = A.toarray().astype(np.float64)
    pattern = np.tril(a != 0)
    n = a.shape[0]
    L = np.zeros_like(a)
    for k in range(n):
        L[k, k] = np.sqrt(a[k, k] - np.dot(L[k, :k], L[k, :k]))
        for i in range(k + 1, n):
            if pattern[i, k]:
                L[i, k] = (a[i, k] - np.dot(L[i, :k], L[k, :k])) / L[k, k]
    return L


def _random_diagonally_heavy(rng, n, density, symmetric=False):
    R = sp.random(n, n, density=density, random_state=rng, format="csr")
    R.data -= 0.5
    if symmetric:
        R = R + R.T
    return (R + sp.eye(n) * (2.0 + density * n)).tocsr()


def _permutation(M, n):
    return np.arange(n) if M.permutation is None else M.permutation


@pytest.mark.parametrize("ordering", ["natural", "color"])
@pytest.mark.parametrize("n,density", [(30, 0.15), (80, 0.05)])
def test_ilu0_equals_the_dense_loop(rng, n, density, ordering):
    A = _random_diagonally_heavy(rng, n, density)
    M = ilu0(CSRMatrix.from_scipy(A), ordering=ordering)
    p = _permutation(M, n)
    L, U = dense_ilu0(A[p][:, p])
    np.testing.assert_allclose(M.L.toarray(), L, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(M.U.toarray(), U, rtol=1e-12, atol=1e-14)


def test_ilu0_of_a_tridiagonal_matrix_is_its_exact_lu():
    A = sp.diags([np.full(9, -1.0), np.full(10, 3.0), np.full(9, -2.0)], [-1, 0, 1], format="csr")
    M = ilu0(A, ordering="natural")
    np.testing.assert_allclose(((M.L + sp.eye(10)) @ M.U).toarray(), A.toarray(), atol=1e-13)


@pytest.mark.parametrize("ordering", ["natural", "color"])
@pytest.mark.parametrize("n,density", [(30, 0.15), (90, 0.04)])
def test_ic0_equals_the_dense_loop(rng, n, density, ordering):
    A = _random_diagonally_heavy(rng, n, density, symmetric=True)
    M = ic0(A, ordering=ordering)
    p = _permutation(M, n)
    np.testing.assert_allclose(M.L.toarray(), dense_ic0(A[p][:, p]), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("ordering", ["natural", "color"])
def test_ic0_on_poisson_matches_the_dense_loop_and_keeps_float32(ordering):
    A = poisson2d(7).astype(np.float32)
    M = ic0(A, ordering=ordering)
    p = _permutation(M, 49)
    np.testing.assert_allclose(M.L.toarray(), dense_ic0(A[p][:, p]), rtol=1e-12)
    assert M.dtype == np.float32
    assert (M @ np.ones(49, dtype=np.float32)).dtype == np.float32


@pytest.mark.parametrize("make", [lambda rng: poisson2d(12), lambda rng: graph_laplacian(300),
                                  lambda rng: _random_diagonally_heavy(rng, 120, 0.05)],
                         ids=["poisson2d", "graph", "random-nonsymmetric"])
def test_the_color_ordering_is_a_valid_colouring_with_few_levels(rng, make):
    A = sp.csr_matrix(make(rng))
    M = ilu0(A, ordering="color")
    assert M.ordering == "color" and ilu0(A).ordering == "color"  # the default
    colors = greedy_coloring(A)
    p = M.permutation
    assert np.array_equal(p, color_permutation(colors)[0])
    colour_of_slot = colors[p]
    assert np.all(np.diff(colour_of_slot) >= 0) and colour_of_slot[-1] + 1 == M.colors
    B = A[p][:, p].toarray()
    coupled = (B != 0) | (B.T != 0)
    np.fill_diagonal(coupled, False)
    slots, others = np.nonzero(coupled)
    assert np.all(colour_of_slot[slots] != colour_of_slot[others]), "two coupled rows share a colour"
    assert max(M.levels) <= M.colors
    if A.shape == (144, 144):
        assert M.colors == 2 and M.levels == (2, 2)  # red-black: four row-parallel steps in all
    natural = ilu0(A, ordering="natural")
    assert natural.permutation is None and natural.colors is None and natural.levels[0] > 2


def test_level_sets_respect_every_dependency(rng):
    A = _random_diagonally_heavy(rng, 200, 0.03)
    strict = sp.tril(A, k=-1, format="csr")
    order, level_ptr = level_sets(strict)
    assert sorted(order) == list(range(200))
    level = np.empty(200, dtype=int)
    level[order] = np.repeat(np.arange(level_ptr.size - 1), np.diff(level_ptr))
    rows, cols = strict.nonzero()
    assert np.all(level[rows] > level[cols])
    # each row is exactly one past its deepest dependency (the levels are the shortest schedule)
    deepest = np.full(200, -1)
    np.maximum.at(deepest, rows, level[cols])
    assert np.array_equal(level, deepest + 1)


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("unit_diagonal", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("plan", ["superlu", "sweep"])
def test_spsolve_triangular_matches_scipy(xp, rng, monkeypatch, lower, unit_diagonal, dtype, plan):
    monkeypatch.setattr(_triangular, "CPU_SWEEP_MIN_ROWS_PER_LEVEL", 1 if plan == "sweep" else 10**9)
    A = _random_diagonally_heavy(rng, 150, 0.05).astype(dtype)
    T = (sp.tril(A) if lower else sp.triu(A)).tocsr()
    b = rng.standard_normal(150).astype(dtype)
    want = scipy_solve_triangular(T, b, lower=lower, unit_diagonal=unit_diagonal)
    got = spsolve_triangular(CSRMatrix.from_scipy(T), xp.asarray(b), lower=lower, unit_diagonal=unit_diagonal)
    assert_matches_scipy(got, want, dtype=dtype)
    B = rng.standard_normal((150, 3)).astype(dtype)
    want = scipy_solve_triangular(T, B, lower=lower, unit_diagonal=unit_diagonal)
    got = spsolve_triangular(T, xp.asarray(B), lower=lower, unit_diagonal=unit_diagonal)
    assert_matches_scipy(got, want, dtype=dtype)


@pytest.mark.parametrize("shape", ["grid", "wide-levels"])
def test_triangular_solver_reuses_its_analysis(xp, rng, shape):
    if shape == "grid":  # 2 sqrt(n) thin levels: one single-block launch on the GPU
        T = sp.tril(poisson2d(40)).tocsr()
    else:  # two levels of 3000 rows: one launch per level on the GPU
        n = 6000
        T = (sp.eye(n) * 2 + sp.diags(np.full(n - 3000, -1.0), -3000)).tocsr()
    solver = TriangularSolver(T, lower=True)
    assert solver.launch_count() == (1 if shape == "grid" else 2)
    for _ in range(2):
        b = rng.standard_normal(T.shape[0])
        assert_matches_scipy(solver.solve(xp.asarray(b)), scipy_solve_triangular(T, b, lower=True))


def test_singular_and_bad_inputs():
    T = sp.csr_matrix(np.array([[0.0, 0.0], [1.0, 3.0]]))
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        spsolve_triangular(T, np.ones(2))
    with pytest.raises(SingularTriangularError):
        spsolve_triangular(T, np.ones(2))
    assert spsolve_triangular(T, np.ones(2), unit_diagonal=True).tolist() == [1.0, 0.0]
    with pytest.raises(InputError, match="shape"):
        spsolve_triangular(sp.eye(3, format="csr"), np.ones(4))
    with pytest.raises(InputError, match="square"):
        ilu0(sp.random(4, 5, density=0.5, format="csr"))
    with pytest.raises(InputError, match="diagonal"):
        ilu0(sp.csr_matrix(np.array([[1.0, 1.0], [1.0, 0.0]])))
    with pytest.raises(InputError, match="symmetric"):
        ic0(convection_diffusion2d(5))
    with pytest.raises(InputError, match="pivot"):
        ic0(sp.csr_matrix(np.array([[1.0, 2.0], [2.0, 1.0]])), shift=0.0)


@pytest.mark.parametrize("ordering", ["natural", "color"])
def test_ilu0_as_an_operator_is_two_triangular_solves(xp, rng, ordering):
    A = convection_diffusion2d(12)
    M = ilu0(A, ordering=ordering)
    p = _permutation(M, A.shape[0])
    v = rng.standard_normal(A.shape[0])
    lower = sp.tril(M.L, k=-1) + sp.eye(A.shape[0])
    want = np.empty_like(v)  # P^T U^{-1} L^{-1} P v
    want[p] = scipy_solve_triangular(M.U.tocsr(), scipy_solve_triangular(lower.tocsr(), v[p]), lower=False)
    assert_matches_scipy(M @ xp.asarray(v), want)
    assert to_host(M.matvec(xp.asarray(v))).shape == (A.shape[0],)
    V = rng.standard_normal((A.shape[0], 2))
    assert_matches_scipy(M @ xp.asarray(V), np.stack([to_host(M @ xp.asarray(V[:, j])) for j in range(2)], axis=1))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("make", [lambda: poisson2d(70), lambda: graph_laplacian(3000)], ids=["poisson", "graph"])
def test_ic0_with_each_ordering_matches_a_scipy_application(xp, rng, make, dtype):
    """Large enough for the host sweep (not SciPy's solve); on the GPU the 2450-row colours of the
    70^2 grid take one launch each and the graph's narrower colours one single-block launch."""
    A = make().astype(dtype)
    for ordering in ("natural", "color"):
        M = ic0(A, ordering=ordering)
        p = _permutation(M, A.shape[0])
        v = rng.standard_normal(A.shape[0]).astype(dtype)
        L = M.L.astype(np.float64)
        want = np.empty(A.shape[0])
        want[p] = scipy_solve_triangular(L.T.tocsr(), scipy_solve_triangular(L, v[p].astype(np.float64)),
                                         lower=False)
        got = M @ xp.asarray(v)
        assert got.dtype == dtype
        assert_matches_scipy(got, want)


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("plan", ["superlu", "sweep"])
def test_triangular_solver_with_a_permutation(xp, rng, monkeypatch, lower, plan):
    """x[p] = T^{-1} b[p]: the permutation folded into the sweep's rows and columns."""
    monkeypatch.setattr(_triangular, "CPU_SWEEP_MIN_ROWS_PER_LEVEL", 1 if plan == "sweep" else 10**9)
    n = 150
    A = _random_diagonally_heavy(rng, n, 0.05)
    T = (sp.tril(A) if lower else sp.triu(A)).tocsr()
    p = rng.permutation(n)
    solver = TriangularSolver(T, lower=lower, permutation=p)
    b = rng.standard_normal(n)
    want = np.empty(n)
    want[p] = scipy_solve_triangular(T, b[p], lower=lower)
    assert_matches_scipy(solver.solve(xp.asarray(b)), want)
    if xp is np:
        assert solver._host_plan(np.dtype(np.float64))[0] == plan
        B = rng.standard_normal((n, 2))
        want = np.empty_like(B)
        want[p] = scipy_solve_triangular(T, B[p], lower=lower)
        assert_matches_scipy(solver.solve(B), want)
    with pytest.raises(InputError, match="permutation"):
        TriangularSolver(T, lower=lower, permutation=np.r_[p[:-1], p[0]])
    with pytest.raises(InputError, match="permutation"):
        TriangularSolver(T, lower=lower, permutation=p[:-1])


def test_errors_name_the_users_row_under_the_color_ordering():
    A = poisson2d(4).tolil()
    A[5, 5] = 0.0
    A = sp.csr_matrix(A)
    A.eliminate_zeros()
    with pytest.raises(InputError, match="row 5 has none"):
        ilu0(A, ordering="color")
    B = poisson2d(4).tolil()
    B[6, 6] = -1.0  # not positive definite; the colouring moves row 6 away from slot 6
    with pytest.raises(InputError, match="positive diagonal; row 6 has -1"):
        ic0(sp.csr_matrix(B), ordering="color")
    with pytest.raises(InputError, match="ordering"):
        ic0(poisson2d(4), ordering="rcm")


def test_color_ordering_takes_one_gpu_launch_per_colour():
    """The GPU plan, computed on the host: a 70^2 grid's 2450-row colours get a launch each (two
    per solve), where natural ordering's 139 levels, all narrower than GROUP_MAX_ROWS, run as one
    single-block sweep."""
    A = poisson2d(70)
    colored, natural = ic0(A, ordering="color"), ic0(A, ordering="natural")
    assert colored.levels == (2, 2) and natural.levels == (139, 139)
    assert [s.launch_count() for s in (colored._first, colored._second)] == [2, 2]
    assert [s.launch_count() for s in (natural._first, natural._second)] == [1, 1]


# Kershaw's matrix (J. Comput. Phys. 26, 1978): symmetric positive definite, and IC(0) in its natural
# order meets a negative pivot in the last row
KERSHAW = sp.csr_matrix(np.array([[3.0, -2.0, 0.0, 2.0], [-2.0, 3.0, -2.0, 0.0], [0.0, -2.0, 3.0, -2.0],
                                  [2.0, 0.0, -2.0, 3.0]]))


def test_ic0_shifts_the_diagonal_only_where_a_pivot_breaks_down():
    with pytest.raises(InputError, match=r"pivot -5 <= 0 in row 3 .*shift='auto' tries"):
        ic0(KERSHAW, ordering="natural", shift=0.0)
    M = ic0(KERSHAW, ordering="natural")
    assert M.shift > 0 and "shifted by" in repr(M)
    shifted = (KERSHAW + M.shift * sp.diags(KERSHAW.diagonal())).tocsr()
    np.testing.assert_allclose(M.L.toarray(), dense_ic0(shifted), rtol=1e-12)
    assert np.linalg.eigvalsh(M.L.toarray() @ M.L.toarray().T).min() > 0  # a positive definite M for CG
    # the smallest doubling shift that factors: half of it breaks down
    with pytest.raises(InputError, match="shifted by"):
        ic0(KERSHAW, ordering="natural", shift=M.shift / 2)
    # the red-black order factors Kershaw's matrix as it is: no shift, the factor unchanged
    assert ic0(KERSHAW, ordering="color").shift == 0.0
    assert ic0(poisson2d(8)).shift == 0.0


def test_ic0_with_a_shift_lets_cg_converge_where_ilu0_does_not_help(rng):
    """A stiffness-like SPD matrix whose IC(0) breaks down: Kershaw's blocks on a chain."""
    from spla.linalg import cg

    A = sp.block_diag([KERSHAW] * 50, format="csr") + sp.diags(np.full(199, -0.1), 1) + sp.diags(
        np.full(199, -0.1), -1)
    A = sp.csr_matrix(A)
    assert np.linalg.eigvalsh(A.toarray()).min() > 0
    b = rng.standard_normal(200)
    M = ic0(A, ordering="natural")
    x, info = cg(A, b, rtol=1e-10, M=M)
    assert info == 0 and M.shift > 0
    np.testing.assert_allclose(A @ x, b, atol=1e-8 * np.linalg.norm(b))


def test_ic0_auto_refuses_a_matrix_no_shift_up_to_the_cap_factors():
    """Shifts 0, FIRST_SHIFT, doubling up to MAX_AUTO_SHIFT; past it the matrix is most likely
    indefinite (here: eigenvalues -1 and 3), and an explicit shift still forces a factor."""
    shifts = list(_triangular._auto_shifts())
    assert shifts[:3] == [0.0, _triangular.FIRST_SHIFT, 2 * _triangular.FIRST_SHIFT]
    assert shifts[-1] <= _triangular.MAX_AUTO_SHIFT < 2 * shifts[-1]
    indefinite = sp.csr_matrix(np.array([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(InputError, match=r"every diagonal shift up to 0.512 diag\(A\).*not positive definite"):
        ic0(indefinite)
    assert ic0(indefinite, shift=1.5).shift == 1.5  # 1 + 1.5 > 2: diagonally dominant


@pytest.mark.parametrize("shift", [-1.0, float("nan"), "large"])
def test_ic0_refuses_a_bad_shift(shift):
    with pytest.raises(InputError, match="shift must be 'auto' or a number >= 0"):
        ic0(poisson2d(4), shift=shift)


def _elimination_cases(rng):
    """(name, matrix to factor, shift): nonsymmetric, a red-black grid, a breakdown, a zero pivot."""
    grid = poisson2d(12)
    permutation, _ = color_permutation(greedy_coloring(grid))
    zero_pivot = sp.csr_matrix(np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0], [0.0, 1.0, 2.0]]))  # u_11 = 0
    return [("convection-diffusion", convection_diffusion2d(9), 0.0),
            ("random", _random_diagonally_heavy(rng, 80, 0.08), 0.0),
            ("red-black grid", grid[permutation][:, permutation].tocsr(), 0.0),
            ("Kershaw, natural, shifted", KERSHAW, 0.128),
            ("Kershaw, natural", KERSHAW, 0.0),
            ("zero pivot", zero_pivot, 0.0)]


def test_the_compiled_elimination_gives_the_numpy_schedules_bits(rng):
    from spla.io import native

    if native.ilu0_eliminator() is None:
        pytest.skip(f"no C compiler here ({native.status()})")
    for name, A, shift in _elimination_cases(rng):
        elimination = _triangular._Elimination(A)
        assert elimination.compiled is not None
        compiled, compiled_pivots = elimination.eliminate(shift)
        elimination.compiled = None
        schedule, schedule_pivots = elimination.eliminate(shift)
        assert np.array_equal(compiled, schedule, equal_nan=True), name
        assert np.array_equal(compiled_pivots, schedule_pivots, equal_nan=True), name
    assert not np.isfinite(schedule_pivots).all()  # the zero pivot reached both the same way


def test_ilu0_without_a_compiler_takes_the_numpy_schedule(monkeypatch, rng):
    from spla.io import native

    A = convection_diffusion2d(9)
    want = ilu0(A, ordering="natural")
    monkeypatch.setenv(native.NATIVE_ENV, "off")
    elimination = _triangular._Elimination(A)
    assert elimination.compiled is None
    got = ilu0(A, ordering="natural")
    np.testing.assert_array_equal(got.L.toarray(), want.L.toarray())
    np.testing.assert_array_equal(got.U.toarray(), want.U.toarray())
    L, U = dense_ilu0(A)
    np.testing.assert_allclose(got.U.toarray(), U, rtol=1e-12, atol=1e-14)
