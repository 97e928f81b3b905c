"""spla's own smoothed-aggregation set-up (setup="spla") on the matrix's side: a valid hierarchy,
complexities and AMG-CG iterations close to pyamg's, the same hierarchy from the CPU and the GPU."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import to_host
from precond_systems import SPD_SYSTEMS, anisotropic2d, graph_laplacian, jumping2d, poisson2d, poisson3d
from scipy.sparse.csgraph import connected_components

from spla import CSRMatrix, DeviceMemoryError, device, linalg
from spla.errors import InputError
from spla.linalg import _amg, _amg_setup

THETA_025 = {"strength": ("symmetric", {"theta": 0.25})}
HIERARCHIES = {
    "poisson2d": (lambda: poisson2d(40), {}),
    "poisson3d": (lambda: poisson3d(12), {}),
    "anisotropic2d": (lambda: anisotropic2d(40), THETA_025),
    "jumping2d": (lambda: jumping2d(32), {}),
    "graph_laplacian": (lambda: graph_laplacian(400), {}),
}


def _on_side(A, xp) -> CSRMatrix:
    """A as a CSRMatrix where xp computes: the set-up runs where the matrix lives."""
    csr = CSRMatrix.from_scipy(sp.csr_matrix(A))
    return csr if xp is np else csr.to_device()


def _strength(A, theta: float) -> sp.csr_matrix:
    """The symmetric strength graph, computed here with SciPy alone."""
    A = sp.csr_matrix(A)
    d = A.diagonal()
    C = A.tocoo()
    scale = np.sqrt(np.abs(d[C.row] * d[C.col]))
    magnitude = np.abs(C.data)
    keep = (C.row != C.col) & (magnitude >= theta * scale) & (magnitude > _amg_setup.NEGLIGIBLE * scale)
    return sp.csr_matrix((np.ones(int(keep.sum())), (C.row[keep], C.col[keep])), shape=A.shape)


def _theta(options) -> float:
    return options.get("strength", ("symmetric", {}))[1].get("theta", 0.0)


def _iterations(A, b, M, **kwargs) -> int:
    count = [0]
    x, info = linalg.cg(A, b, rtol=1e-8, M=M, maxiter=2000, check_every=1,
                        callback=lambda xk: count.__setitem__(0, count[0] + 1), **kwargs)
    assert info == 0
    return count[0]


@pytest.mark.parametrize("name", list(HIERARCHIES))
def test_the_hierarchy_is_valid(xp, name):
    make, options = HIERARCHIES[name]
    A = make()
    theta = _theta(options)
    M = linalg.amg(_on_side(A, xp), setup="spla", max_coarse=10, **options)
    assert M.setup == "spla" and M.levels >= 2
    sizes = M.level_sizes()
    aggregates = M.aggregates()
    assert len(aggregates) == M.levels - 1
    for level in range(M.levels - 1):
        ops = M.operators(level)
        A_l = ops["A"].to_scipy()
        P, R = ops["P"].to_scipy(), ops["R"].to_scipy()
        C = _strength(A_l, theta)
        owner = aggregates[level]
        # one aggregate per row that has a strong connection, none for the others (pyamg's rule)
        assert np.array_equal(owner >= 0, np.diff(C.indptr) > 0)
        count = sizes[level + 1]
        assert P.shape == (sizes[level], count) and owner.max() == count - 1
        assert np.all(np.bincount(owner[owner >= 0], minlength=count) > 0)
        # every aggregate is connected in the strength graph
        Cc = C.tocoo()
        inside = (owner[Cc.row] == owner[Cc.col]) & (owner[Cc.row] >= 0)
        intra = sp.csr_matrix((np.ones(int(inside.sum())), (Cc.row[inside], Cc.col[inside])), shape=C.shape)
        _, labels = connected_components(intra, directed=False)
        aggregated = owner >= 0
        assert np.unique(labels[aggregated]).size == count
        # R = P^T, and the coarse operator is the Galerkin product, symmetric positive definite
        assert abs(R - P.T).max() == 0
        coarse = M.operators(level + 1)["A"].to_scipy().toarray()
        galerkin = (P.T @ A_l @ P).toarray()
        scale = np.abs(galerkin).max()
        np.testing.assert_allclose(coarse, galerkin, rtol=0, atol=1e-12 * scale)
        np.testing.assert_allclose(coarse, coarse.T, rtol=0, atol=1e-12 * scale)
        assert np.linalg.eigvalsh(coarse).min() > 0


@pytest.mark.parametrize("name", ["poisson2d", "poisson3d", "jumping2d"])
def test_prolongation_is_jacobi_smoothed_tentative(xp, name):
    """P = (I - w D^-1 A) P0 on the finest level, with P0 the normalised aggregates and
    w rho(D^-1 A) = 4/3 up to the Lanczos estimate (which may sit a little below rho)."""
    make, options = HIERARCHIES[name]
    A = sp.csr_matrix(make())
    M = linalg.amg(_on_side(A, xp), setup="spla", max_coarse=10, **options)
    owner = M.aggregates()[0]
    sizes = np.bincount(owner)
    n = A.shape[0]
    P0 = sp.csr_matrix((1.0 / np.sqrt(sizes[owner]), owner, np.arange(n + 1)), shape=(n, sizes.size))
    T = (sp.diags(1.0 / A.diagonal()) @ A @ P0).toarray()
    P = M.operators(0)["P"].to_scipy().toarray()
    difference = P0.toarray() - P
    w = float(np.sum(difference * T) / np.sum(T * T))
    np.testing.assert_allclose(P, P0.toarray() - w * T, rtol=0, atol=1e-13)
    d = np.sqrt(A.diagonal())
    rho = np.linalg.eigvalsh((A / d[:, None] / d[None, :]).toarray()).max()
    assert 4.0 / 3.0 <= w * rho <= 4.0 / 3.0 * 1.05


@pytest.mark.parametrize("make,options", [
    (lambda: poisson2d(40), {}),
    (lambda: poisson2d(64), {}),
    (lambda: poisson3d(12), {}),
    (lambda: poisson3d(16), {}),
    (lambda: anisotropic2d(40), THETA_025),
    (lambda: anisotropic2d(64), {}),
    (lambda: jumping2d(32), {}),
])
def test_complexities_close_to_pyamg(make, options):
    pytest.importorskip("pyamg")
    A = make()
    ours = linalg.amg(A, setup="spla", max_coarse=10, **options)
    theirs = linalg.amg(A, setup="pyamg", max_coarse=10, **options)
    # parallel MIS(2) aggregates come out a little larger than pyamg's sequential ones
    assert 0.75 <= ours.operator_complexity() / theirs.operator_complexity() <= 1.15
    assert 0.85 <= ours.grid_complexity() / theirs.grid_complexity() <= 1.1


def _catalogue_cases():
    for name in SPD_SYSTEMS:
        for smoother in ("jacobi", "chebyshev"):
            yield name, smoother, SPD_SYSTEMS[name], {}
    yield "poisson3d(20)", "jacobi", lambda: poisson3d(20), {}
    yield "anisotropic2d(64)", "jacobi", lambda: anisotropic2d(64), THETA_025
    yield "anisotropic2d(64), theta 0", "jacobi", lambda: anisotropic2d(64), {}


@pytest.mark.parametrize("name,smoother,make,options", list(_catalogue_cases()),
                         ids=[f"{c[0]}-{c[1]}" for c in _catalogue_cases()])
def test_amg_cg_iterations_within_1_5x_of_pyamg(xp, name, smoother, make, options):
    pytest.importorskip("pyamg")
    A = sp.csr_matrix(make())
    b = np.linspace(1.0, 2.0, A.shape[0])
    ours = linalg.amg(_on_side(A, xp), setup="spla", smoother=smoother, max_coarse=10, **options)
    theirs = linalg.amg(A, setup="pyamg", smoother=smoother, max_coarse=10, **options)
    count = _iterations(_on_side(A, xp), xp.asarray(b), ours)
    reference = _iterations(A, b, theirs)
    assert count <= 1.5 * reference + 1, (count, reference)


@pytest.mark.gpu
@pytest.mark.parametrize("name", list(HIERARCHIES))
def test_cpu_and_gpu_setups_build_the_same_hierarchy(name):
    make, options = HIERARCHIES[name]
    A = make()
    host = linalg.amg(_on_side(A, np), setup="spla", max_coarse=10, **options)
    gpu = linalg.amg(_on_side(A, device.require_cupy()), setup="spla", max_coarse=10, **options)
    assert gpu.level_sizes() == host.level_sizes()
    for ours, theirs in zip(gpu.aggregates(), host.aggregates(), strict=True):
        np.testing.assert_array_equal(ours, theirs)
    for level in range(host.levels):
        for key, op in host.operators(level).items():
            want = op.to_scipy().toarray()
            got = gpu.operators(level)[key].to_scipy().toarray()
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-12 * np.abs(want).max())
    v = np.random.default_rng(3).standard_normal(A.shape[0])
    want = host.matvec(v)  # the same cycle, both hierarchies applied on the host
    np.testing.assert_allclose(gpu.matvec(v), want, rtol=0, atol=1e-9 * np.abs(want).max())


def _graph(A, theta=0.0) -> _amg_setup.StrengthGraph:
    csr = CSRMatrix.from_scipy(sp.csr_matrix(A))
    ops = _amg_setup.HostSetupOps()
    rows = ops.row_ids(csr.indptr, csr.nnz)
    return _amg_setup.strength_graph(ops, csr, rows, _amg_setup.diagonal_of(np, csr, rows), theta)


@pytest.mark.parametrize("make", [lambda: poisson2d(30), lambda: poisson3d(9), lambda: graph_laplacian(300)])
def test_mis2_roots_are_a_maximal_distance_2_independent_set(xp, make):
    A = make()
    graph = _graph(A)
    ops = _amg_setup.HostSetupOps()
    if xp is not np:
        from spla.backends.cuda.amg import DeviceSetupOps

        ops = DeviceSetupOps()
        graph = _amg_setup.StrengthGraph(xp.asarray(graph.indptr), xp.asarray(graph.indices), graph.n,
                                         xp.asarray(graph.isolated))
    priorities = _amg_setup._priorities(xp, graph.n, _amg_setup.SEED)
    roots, rounds = _amg_setup.mis2_roots(ops, graph, priorities)
    roots = to_host(roots)
    C = _strength(A, 0.0)
    within_2 = sp.csr_matrix(((C + C @ C) > 0).astype(np.int8))
    within_2.setdiag(0)  # a node is not its own distance-2 neighbour
    within_2.eliminate_zeros()
    root_index = np.flatnonzero(roots)
    assert within_2[root_index][:, root_index].nnz == 0  # no two roots within distance 2
    covered = np.asarray(within_2[:, root_index].sum(axis=1)).ravel() > 0
    isolated = np.diff(C.indptr) == 0
    assert np.all(roots | covered | isolated)  # maximal: every other connected node sees a root
    assert not np.any(roots & isolated)
    assert rounds < 40
    if xp is not np:  # the device rounds pick exactly the host's roots
        host_roots, _ = _amg_setup.mis2_roots(_amg_setup.HostSetupOps(), _graph(A),
                                              _amg_setup._priorities(np, graph.n, _amg_setup.SEED))
        np.testing.assert_array_equal(roots, host_roots)


def test_setup_is_deterministic_and_rows_without_strong_connections_stay_out():
    A = sp.block_diag([poisson2d(20), sp.identity(30)], format="csr")
    first = linalg.amg(A, setup="spla", max_coarse=10)
    second = linalg.amg(A, setup="spla", max_coarse=10)
    for a, b in zip(first.aggregates(), second.aggregates(), strict=True):
        np.testing.assert_array_equal(a, b)
    owner = first.aggregates()[0]
    assert np.all(owner[400:] == -1) and np.all(owner[:400] >= 0)
    b = np.ones(A.shape[0])
    x, info = linalg.cg(A, b, rtol=1e-10, M=first)
    assert info == 0
    assert np.linalg.norm(b - A @ x) <= 1e-10 * np.linalg.norm(b) * 1.01


def test_spectral_radius_matches_the_eigenvalues(rng):
    small = poisson2d(3).toarray()  # 9 rows: 10 Lanczos steps exhaust the space, the estimate is exact
    got = _amg_setup.spectral_radius(np, lambda v: small @ v, 9, 10, 1)
    assert got == pytest.approx(np.linalg.eigvalsh(small).max(), rel=1e-12)
    A = sp.csr_matrix(poisson2d(30))
    got = _amg_setup.spectral_radius(np, lambda v: A @ v, A.shape[0], 10, 1)
    want = np.linalg.eigvalsh(A.toarray()).max()
    assert 0.97 * want <= got <= want * (1 + 1e-12)


def test_chebyshev_coefficients_give_the_scaled_chebyshev_residual():
    lower, upper, degree = 0.1, 2.0, 3
    p = np.array(_amg.chebyshev_coefficients(lower, upper, degree))
    x = np.linspace(lower, upper, 401)
    residual = 1.0 - x * np.polyval(p, x)
    t = (upper + lower - 2 * x) / (upper - lower)  # [lower, upper] -> [1, -1]
    chebyshev = np.cos(degree * np.arccos(np.clip(t, -1, 1)))
    scale = np.cos(degree * np.arccosh((upper + lower) / (upper - lower)) * 1j).real
    np.testing.assert_allclose(residual, chebyshev / scale, rtol=0, atol=1e-12)


@pytest.mark.parametrize("matrix_dtype", [np.float32, np.float64])
def test_setup_times_and_solves_on_the_setup_side(xp, rng, matrix_dtype):
    A = poisson3d(14)
    M = linalg.amg(_on_side(A.astype(matrix_dtype), xp), setup="spla", smoother="chebyshev")  # set up in float64
    steps = {"strength", "aggregation", "spectral_radius", "tentative", "smoothing", "galerkin", "coarse_solve"}
    assert steps | {"total"} == set(M.setup_times)
    assert all(seconds >= 0 for seconds in M.setup_times.values())
    assert sum(M.setup_times[s] for s in steps) <= M.setup_times["total"] * 1.05 + 1e-3
    b = rng.standard_normal(A.shape[0])
    for dtype in (np.float32, np.float64):
        x, info = M.solve(xp.asarray(b.astype(dtype)), rtol=1e-5 if dtype == np.float32 else 1e-10, accel="cg")
        assert info == 0 and x.dtype == dtype
        want = sp.linalg.spsolve(A.tocsc(), b)
        tolerance = 1e-3 if dtype == np.float32 else 1e-8
        np.testing.assert_allclose(to_host(x), want, rtol=0, atol=tolerance * np.abs(want).max())


def test_auto_setup_per_side(xp, monkeypatch):
    A = _on_side(poisson2d(24), xp)
    expected = "spla" if xp is not np or not _amg._have_pyamg() else "pyamg"
    assert linalg.amg(A).setup == expected
    monkeypatch.setattr(_amg, "_have_pyamg", lambda: False)
    assert linalg.amg(A).setup == "spla"


@pytest.mark.gpu
def test_a_product_that_does_not_fit_is_a_device_memory_error(monkeypatch):
    A = _on_side(poisson2d(40), device.require_cupy())
    monkeypatch.setattr(device, "free_device_memory", lambda: 1024)
    with pytest.raises(DeviceMemoryError, match="AMG"):
        linalg.amg(A, setup="spla", max_coarse=10)


@pytest.mark.parametrize("kwargs,match", [
    ({"improve_candidates": None}, "pyamg options"),
    ({"strength": ("classical", {"theta": 0.25})}, "strength"),
    ({"strength": ("symmetric", {"theta": 2.0})}, "theta"),
    ({"aggregate": "standard"}, "MIS"),
    ({"smooth": ("energy", {})}, "prolongation"),
    ({"B": np.ones((400, 2))}, "near-null"),
    ({"max_coarse": 0}, "max_coarse"),
    ({"max_levels": 0}, "max_levels"),
])
def test_bad_spla_options_are_input_errors(kwargs, match):
    with pytest.raises(InputError, match=match):
        linalg.amg(poisson2d(20), setup="spla", **kwargs)


def test_matrices_the_spla_setup_refuses():
    with pytest.raises(InputError, match="setup must be"):
        linalg.amg(poisson2d(8), setup="hypre")
    with pytest.raises(InputError, match="positive diagonal"):
        linalg.amg(-poisson2d(30), setup="spla", max_coarse=10)
    with pytest.raises(InputError, match="does not coarsen"):
        linalg.amg(poisson2d(100), setup="spla", max_levels=1)
    with pytest.raises(InputError, match="non-empty"):
        linalg.amg(sp.csr_matrix((0, 0)), setup="spla")
    bad = poisson2d(10).astype(np.float64)
    bad.data[3] = np.nan
    with pytest.raises(InputError, match="NaN"):
        linalg.amg(bad, setup="spla")


def test_a_single_near_null_space_vector_builds_the_tentative_prolongator():
    A = sp.csr_matrix(poisson2d(24))
    B = np.linspace(1.0, 2.0, A.shape[0])
    M = linalg.amg(A, setup="spla", max_coarse=10, B=B)
    owner = M.aggregates()[0]
    norms = np.sqrt(np.bincount(owner, weights=B * B))
    n = A.shape[0]
    P0 = sp.csr_matrix((B / norms[owner], owner, np.arange(n + 1)), shape=(n, norms.size)).toarray()
    T = (sp.diags(1.0 / A.diagonal()) @ A @ P0)
    P = M.operators(0)["P"].to_scipy().toarray()
    w = float(np.sum((P0 - P) * T) / np.sum(T * T))
    np.testing.assert_allclose(P, P0 - w * T, rtol=0, atol=1e-13)
    assert np.allclose(P0.T @ P0, np.eye(norms.size))  # orthonormal columns
