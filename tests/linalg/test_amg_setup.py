"""spla's own smoothed-aggregation set-up (setup="spla") on the matrix's side: a valid hierarchy,
complexities and AMG-CG iterations close to pyamg's, the same hierarchy from the CPU and the GPU."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import to_host
from precond_systems import SPD_SYSTEMS, anisotropic2d, graph_laplacian, jumping2d, poisson2d, poisson3d
from scipy.sparse.csgraph import connected_components

import spla
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
    w rho(D^-1 A) = 4/3 up to the Lanczos estimate (a lower bound: after LANCZOS_STEPS = 6 steps
    up to about 8% below rho on these grids)."""
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
    assert 4.0 / 3.0 <= w * rho <= 4.0 / 3.0 * 1.10


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
    graph, nonpositive, nonfinite = _amg_setup.strength_graph(ops, csr, ops.diagonal(csr), theta, first_level=True)
    assert nonpositive == nonfinite == 0
    return graph


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
    priorities = ops.priorities(graph.n, _amg_setup._hash_offset(_amg_setup.SEED))
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
        host = _amg_setup.HostSetupOps()
        host_roots, _ = _amg_setup.mis2_roots(host, _graph(A),
                                              host.priorities(graph.n, _amg_setup._hash_offset(_amg_setup.SEED)))
        np.testing.assert_array_equal(roots, host_roots)


@pytest.mark.parametrize("name,smoother", [("poisson2d", "jacobi"), ("poisson3d", "chebyshev"),
                                           ("anisotropic2d", "jacobi"), ("graph_laplacian", "jacobi")])
def test_host_reads_per_level(xp, name, smoother):
    """The set-up copies values to the host only where it needs them: the row statistics of the
    finest operator; per coarsened level the strength graph's size (with the diagonal check), an
    MIS flag every MIS_CHECK_EVERY rounds, the aggregate counts, each spectral radius's Lanczos
    matrix and the new operators' row statistics; the coarsest inverse's accuracy. The two Galerkin
    products' sizes are read only where their bounds from the longest row do not pass the product's
    checks (forced here the second time: the same hierarchy, two more reads a level). On the GPU
    each read is a synchronisation."""
    make, options = HIERARCHIES[name]
    A = _on_side(make(), xp)
    setup_options = _amg_setup.SetupOptions(theta=_theta(options), max_coarse=10, rho_dinv_a=smoother == "jacobi",
                                            rho_a=smoother == "chebyshev")
    result = _amg_setup.smoothed_aggregation(A, setup_options)
    coarsened = [level for level in result.levels if level.P is not None]
    assert len(coarsened) >= 2
    radii = 1 + (smoother == "chebyshev")
    per_level = [3 + radii + level.mis_rounds // _amg_setup.MIS_CHECK_EVERY for level in coarsened]
    assert all(level.mis_rounds % _amg_setup.MIS_CHECK_EVERY == 0 for level in coarsened)
    assert result.reads == 1 + sum(per_level) + 1
    ops_type = type(_amg_setup._ops_for(A))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ops_type, "bound_suffices", lambda self, products, A: False)
        counted = _amg_setup.smoothed_aggregation(A, setup_options)
    assert counted.reads == result.reads - 1 + 2 * len(coarsened)  # A kept its row statistics from the first
    for got, want in zip(counted.levels, result.levels, strict=True):
        np.testing.assert_array_equal(to_host(got.A.indptr), to_host(want.A.indptr))
        np.testing.assert_allclose(to_host(got.A.data), to_host(want.A.data), rtol=1e-12)
    M = linalg.amg(A, setup="spla", smoother=smoother, max_coarse=10, **options)
    assert M.setup_reads == result.reads - 1  # A keeps the row statistics the first set-up gave it


@pytest.mark.gpu
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_device_setup_ops_match_the_host(rng, index_dtype):
    """Each raw-kernel step of the GPU set-up (kernels/amg_setup.cu) against its NumPy twin, on a
    matrix with a varying diagonal, couplings on both sides of theta, and a row without strong
    neighbours; the integer steps and the per-row values exactly, the reductions to rounding."""
    from spla.backends.cuda.amg import DeviceSetupOps

    cupy = device.require_cupy()
    noise = sp.random(576, 576, density=0.01, random_state=np.random.default_rng(5), format="csr") * 0.05
    A = sp.csr_matrix(jumping2d(24) - (noise + noise.T)).tolil()
    A[7, :] = 0
    A[:, 7] = 0
    A[7, 7] = 3.0
    A = (A + 10 * sp.identity(576)).tocsr()
    A.sort_indices()
    host_A = CSRMatrix(A.data, A.indices, A.indptr, A.shape, index_dtype=index_dtype)
    device_A = host_A.to_device()
    host, dev = _amg_setup.HostSetupOps(), DeviceSetupOps()
    np.testing.assert_array_equal(dev.diagonal(device_A).get(), host.diagonal(host_A))
    assert dev.reads == 0
    diagonal = host.diagonal(host_A)
    for theta in (0.0, 0.25):
        want, *_ = _amg_setup.strength_graph(host, host_A, diagonal, theta, first_level=True)
        got, *_ = _amg_setup.strength_graph(dev, device_A, cupy.asarray(diagonal), theta, first_level=True)
        for field in ("indptr", "indices", "isolated"):
            np.testing.assert_array_equal(getattr(got, field).get(), getattr(want, field))
        assert want.isolated[7] and got.indices.dtype == index_dtype
    graph, _, _ = _amg_setup.strength_graph(dev, device_A, cupy.asarray(diagonal), 0.25, first_level=False)
    host_graph, _, _ = _amg_setup.strength_graph(host, host_A, diagonal, 0.25, first_level=False)
    assert dev.reads == 3  # the strength graph's size with the diagonal check, once per graph
    mask = rng.random(576) < 0.4
    np.testing.assert_array_equal(dev.row_count(graph, cupy.asarray(mask)).get(), host.row_count(host_graph, mask))
    keys = rng.integers(0, 2**62, size=576)
    np.testing.assert_array_equal(dev.row_max(graph, cupy.asarray(keys)).get(), host.row_max(host_graph, keys))
    for offset in (0, _amg_setup._hash_offset(_amg_setup.SEED + 3)):
        np.testing.assert_array_equal(dev.priorities(576, offset).get(), host.priorities(576, offset))
        np.testing.assert_array_equal(dev.start_vector(576, offset).get(), host.start_vector(576, offset))
    priorities = host.priorities(576, 12345)
    owner = np.where(rng.random(576) < 0.4, rng.integers(0, 576, size=576), -1)
    sources = (owner >= 0) & (rng.random(576) < 0.7)
    np.testing.assert_array_equal(
        dev.join(graph, cupy.asarray(owner), cupy.asarray(priorities), cupy.asarray(sources)).get(),
        host.join(host_graph, owner, priorities, sources))
    shift = _amg_setup.STATE_SHIFT
    keys = (rng.integers(0, 3, size=576) << shift) | priorities
    for near in (keys, host.row_max(host_graph, keys)):  # MIS(1) and MIS(2) rounds
        host_flags, device_flags = np.zeros(1, dtype=np.int32), cupy.zeros(1, dtype=cupy.int32)
        want = host.mis_round(host_graph, near, keys, host_flags, 0, shift)
        got = dev.mis_round(graph, cupy.asarray(near), cupy.asarray(keys), device_flags, 0, shift)
        np.testing.assert_array_equal(got.get(), want)
        assert device_flags.get()[0] == host_flags[0]
    np.testing.assert_array_equal(dev.jacobi_operator_values(device_A, cupy.asarray(diagonal), 0.7).get(),
                                  host.jacobi_operator_values(host_A, diagonal, 0.7))
    segments, values = rng.integers(0, 50, size=576), rng.standard_normal(576)
    np.testing.assert_allclose(dev.segment_sum(cupy.asarray(segments), cupy.asarray(values), 60).get(),
                               host.segment_sum(segments, values, 60), rtol=0, atol=1e-12)
    a, b, w = rng.standard_normal((3, 576))
    scalars = cupy.zeros(2)
    dev.dot(cupy.asarray(a), cupy.asarray(b), scalars, 0)
    dev.dot(cupy.asarray(a), cupy.asarray(b), scalars, 1, weight=cupy.asarray(w))
    np.testing.assert_allclose(scalars.get(), [a @ b, (a * w) @ b], rtol=1e-12)
    assert dev.reads == 3
    S = A.astype(np.float64)
    for d in (None, diagonal):
        want = _amg_setup.spectral_radius(host, lambda v: S @ v, d, 576, 10, 3)
        got = _amg_setup.spectral_radius(dev, lambda v: spla.spmv(device_A, v), None if d is None else cupy.asarray(d),
                                         576, 10, 3)
        assert got == pytest.approx(want, rel=1e-10)
    assert dev.reads == 5  # and the two tridiagonal matrices: nothing else came to the host
    # row statistics for the SpMV planner: a matrix with empty rows and one long row, and an empty one
    ragged = np.concatenate([[0], np.cumsum(rng.integers(0, 4, size=999)), [0]]).astype(index_dtype)
    ragged[-1] = ragged[-2] + 500
    indptrs = [host_A.indptr, ragged, np.zeros(1, dtype=index_dtype)]
    got = dev.row_length_summaries([cupy.asarray(p) for p in indptrs])
    want = host.row_length_summaries(indptrs)
    assert [g[1:] for g in got] == [w[1:] for w in want] and got[1][1] == 500
    np.testing.assert_allclose([g[0] for g in got], [w[0] for w in want], rtol=1e-12)
    assert dev.reads == 6  # one read for all three


@pytest.mark.gpu
def test_prepare_binds_every_level_and_looks_up_only_the_users_matrix(tmp_path, monkeypatch, rng):
    """prepare() does what the first GPU application did (copy, bind each level's products); the
    operators the set-up built never go through the tuning cache's fingerprint (a row-pointer copy
    and hash each), only the caller's matrix does, once."""
    from spla.planning import tune as plan_tune

    cupy = device.require_cupy()
    cache = tmp_path / "tune.json"
    cache.write_text("{}")
    monkeypatch.setenv("SPLA_TUNE_CACHE", str(cache))
    fingerprinted = []
    real = plan_tune.fingerprint
    monkeypatch.setattr(plan_tune, "fingerprint", lambda A, name: fingerprinted.append(A.shape) or real(A, name))
    A = _on_side(poisson2d(64), cupy)
    M = linalg.amg(A, setup="spla", max_coarse=10)
    assert M.levels >= 4
    v = rng.standard_normal(A.n_rows)
    assert M.prepare(cupy.asarray(v)) is M
    assert fingerprinted == [A.shape]
    want = linalg.amg(_on_side(poisson2d(64), np), setup="spla", max_coarse=10).matvec(v)
    np.testing.assert_allclose(M.matvec(cupy.asarray(v)).get(), want, rtol=0, atol=1e-9 * np.abs(want).max())
    assert fingerprinted == [A.shape]


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
    ops = _amg_setup.HostSetupOps()
    small = poisson2d(3).toarray()  # 9 rows: 10 Lanczos steps exhaust the space, the estimate is exact
    got = _amg_setup.spectral_radius(ops, lambda v: small @ v, None, 9, 10, 1)
    assert got == pytest.approx(np.linalg.eigvalsh(small).max(), rel=1e-12)
    A = sp.csr_matrix(jumping2d(30))  # a diagonal that varies: rho(D^-1 A) differs from rho(A) / max(d)
    d = A.diagonal()
    for diagonal, dense in ((None, A.toarray()), (d, (A / np.sqrt(d)[:, None] / np.sqrt(d)[None, :]).toarray())):
        got = _amg_setup.spectral_radius(ops, lambda v: A @ v, diagonal, A.shape[0], 10, 1)
        want = np.linalg.eigvalsh(dense).max()
        assert 0.97 * want <= got <= want * (1 + 1e-12)
    assert ops.reads == 3  # the tridiagonal matrix, once per estimate


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
