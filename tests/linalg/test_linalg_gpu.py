"""GPU (CuPy) variants of the solver and PageRank tests: CuPy in -> CuPy out, same answers as SciPy/networkx."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as sla

import spla
from spla import CSRMatrix, linalg
from spla.io import generators

pytestmark = pytest.mark.gpu

SYSTEMS = {
    "poisson2d": lambda: generators.poisson2d(48).to_scipy(),
    "convdiff": lambda: (sp.kron(sp.identity(30), sp.diags([-1.6, 2.0, -0.4], [-1, 0, 1], shape=(30, 30)))
                         + sp.kron(sp.diags([-1.6, 2.0, -0.4], [-1, 0, 1], shape=(30, 30)), sp.identity(30))).tocsr(),
    "indefinite": lambda: (generators.poisson2d(16).to_scipy() - 1.5 * sp.identity(256)).tocsr(),
}
CASES = [("poisson2d", m) for m in ("cg", "bicgstab", "gmres", "minres")] + [
    ("convdiff", "bicgstab"), ("convdiff", "gmres"), ("indefinite", "minres"), ("indefinite", "gmres")]


def _counting():
    calls = []
    return calls, (lambda arg: calls.append(arg))


@pytest.mark.parametrize("dname", ["float64", "float32"])
@pytest.mark.parametrize("name, method", CASES, ids=[f"{n}-{m}" for n, m in CASES])
@pytest.mark.parametrize("check_every", [1, None], ids=["check1", "checkdefault"])
def test_gpu_solver_matches_cpu(name, method, dname, check_every):
    import cupy

    dtype = np.dtype(dname)
    A = SYSTEMS[name]().astype(dtype)
    b = np.random.default_rng(3).standard_normal(A.shape[0]).astype(dtype)
    rtol = 1e-8 if dname == "float64" else 1e-4
    kwargs = {"callback_type": "pr_norm"} if method == "gmres" else {}
    if check_every is not None and method in ("cg", "bicgstab"):
        kwargs["check_every"] = check_every
    calls_gpu, cb_gpu = _counting()
    calls_cpu, cb_cpu = _counting()
    x_gpu, info_gpu = getattr(linalg, method)(CSRMatrix.from_scipy(A), cupy.asarray(b), rtol=rtol,
                                              callback=cb_gpu, **kwargs)
    x_cpu, info_cpu = getattr(linalg, method)(A, b, rtol=rtol, callback=cb_cpu,
                                              **{k: v for k, v in kwargs.items() if k != "check_every"})
    assert isinstance(x_gpu, cupy.ndarray) and x_gpu.dtype == dtype
    assert info_gpu == info_cpu == 0
    x = x_gpu.get()
    residual = np.linalg.norm(b - A.astype(np.float64) @ x) / np.linalg.norm(b)
    assert residual <= rtol * (1.01 if dname == "float64" else 10)
    extra = 0 if check_every == 1 or method not in ("cg", "bicgstab") else linalg.DEFAULT_GPU_CHECK_EVERY - 1
    slack = 2 if dname == "float64" else max(3, len(calls_cpu) // 10)
    if method == "bicgstab":
        # BiCGSTAB's residual is not monotone, so where it first crosses rtol moves with the
        # summation order of its dot products: on poisson2d here, 20 random orders of NumPy's sums
        # give 107-117 iterations (NumPy's own order 116, an emulation of the GPU's grid
        # reduction 110, which is what the H200 gave). SciPy's own tests never pin bicgstab
        # iteration counts (only info == 0 and the residual), and skip one bicgstab case for
        # "numerical noise on some architectures" (scipy gh-15533). So: within 10%.
        slack = max(slack, -(-len(calls_cpu) // 10))
    assert -slack <= len(calls_gpu) - len(calls_cpu) <= slack + extra, (len(calls_gpu), len(calls_cpu))


def test_gpu_cg_iterates_match_cpu_step_by_step():
    import cupy

    A = SYSTEMS["poisson2d"]()
    b = np.random.default_rng(1).standard_normal(A.shape[0])
    gpu, cpu = [], []
    linalg.cg(cupy.asarray(A.toarray()), cupy.asarray(b), rtol=1e-10, maxiter=30, check_every=1,
              callback=lambda xk: gpu.append(xk.get()))
    sla.cg(A, b, rtol=1e-10, maxiter=30, callback=lambda xk: cpu.append(xk.copy()))
    assert len(gpu) == len(cpu) == 30
    for k in (0, 9, 29):
        np.testing.assert_allclose(gpu[k], cpu[k], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("kind", ["cupyx-sparse", "cupy-dense", "cupyx-linear-operator", "csr-on-gpu"])
def test_gpu_operator_inputs(kind):
    import cupy
    import cupyx.scipy.sparse as csp
    import cupyx.scipy.sparse.linalg as csla

    A = SYSTEMS["poisson2d"]()
    b = np.ones(A.shape[0])
    dA = csp.csr_matrix(A)
    operand = {"cupyx-sparse": lambda: dA, "cupy-dense": lambda: cupy.asarray(A.toarray()),
               "cupyx-linear-operator": lambda: csla.aslinearoperator(dA),
               "csr-on-gpu": lambda: CSRMatrix.from_scipy(A).to_device()}[kind]()
    x, info = linalg.cg(operand, cupy.asarray(b), rtol=1e-10)
    reference, _ = sla.cg(A, b, rtol=1e-10)
    assert info == 0 and isinstance(x, cupy.ndarray)
    np.testing.assert_allclose(x.get(), reference, rtol=1e-7, atol=1e-10)


def test_gpu_jacobi_fused_and_general_preconditioner():
    import cupy
    import cupyx.scipy.sparse as csp

    rng = np.random.default_rng(5)
    A = SYSTEMS["poisson2d"]()
    scale = sp.diags(rng.uniform(1, 100, A.shape[0]))
    A = (scale @ A @ scale).tocsr()
    b = rng.standard_normal(A.shape[0])
    ref, ref_info = sla.cg(A, b, rtol=1e-8, M=sp.diags(1 / A.diagonal()), maxiter=5000)
    for M in (linalg.jacobi(A), csp.diags(cupy.asarray(1 / A.diagonal()))):
        x, info = linalg.cg(CSRMatrix.from_scipy(A), cupy.asarray(b), rtol=1e-8, M=M,
                            maxiter=5000, check_every=1)
        assert info == ref_info == 0
        np.testing.assert_allclose(x.get(), ref, rtol=1e-6, atol=1e-9)


# Exact (dyadic) breakdowns, the same as tests/test_linalg.py::BICGSTAB_BREAKDOWNS: b = e1.
BICGSTAB_BREAKDOWNS = {
    "rv": (np.array([[0.0, 1.0], [1.0, 0.0]]), -11),  # r~.v = 0 in the first step
    "rho": (np.array([[2.0, 1.0, 2.0], [0.0, 1.0, 2.0], [1.0, 1.0, 0.0]]), -10),  # omega = 0, then rho = 0
}


@pytest.mark.parametrize("check_every", [1, None], ids=["check1", "checkdefault"])
@pytest.mark.parametrize("case", list(BICGSTAB_BREAKDOWNS))
def test_gpu_bicgstab_breakdown_codes_match_scipy(case, check_every):
    import cupy

    dense, expected = BICGSTAB_BREAKDOWNS[case]
    A = sp.csr_matrix(dense)
    b = np.zeros(A.shape[0])
    b[0] = 1.0
    reference_x, reference = sla.bicgstab(A, b)
    x, info = linalg.bicgstab(CSRMatrix.from_scipy(A), cupy.asarray(b), check_every=check_every)
    assert info == reference == expected
    np.testing.assert_array_equal(x.get(), reference_x)  # x frozen at the breakdown, as SciPy returns it


def test_gpu_breakdown_codes_and_x0():
    import cupy

    A = sp.csr_matrix(np.array([[0.0, 1.0], [1.0, 0.0]]))
    b = cupy.asarray([1.0, 0.0])
    x, info = linalg.cg(CSRMatrix.from_scipy(A), b)
    assert info == -1 and bool(cupy.isfinite(x).all())
    P = SYSTEMS["poisson2d"]()
    b = cupy.asarray(np.ones(P.shape[0]))
    x0 = cupy.full(P.shape[0], 0.5)
    kept = x0.copy()
    x, info = linalg.cg(CSRMatrix.from_scipy(P), b, x0=x0, rtol=1e-6, maxiter=4)
    assert info == 4 and bool((x0 == kept).all())


def test_gpu_block_cg():
    import cupy

    A = SYSTEMS["poisson2d"]()
    B = np.random.default_rng(2).standard_normal((A.shape[0], 4))
    X, info = linalg.block_cg(CSRMatrix.from_scipy(A), cupy.asarray(B), rtol=1e-8, check_every=1)
    assert isinstance(X, cupy.ndarray) and (info == 0).all()
    for j in range(4):
        xj, _ = sla.cg(A, B[:, j], rtol=1e-8)
        np.testing.assert_allclose(X[:, j].get(), xj, rtol=1e-8, atol=1e-11)


# ---------------------------------------------------------------- PageRank on the GPU
def _digraph(seed, n=3000):
    rng = np.random.default_rng(seed)
    G = nx.gnp_random_graph(n, 4.0 / n, directed=True, seed=seed)
    G.remove_edges_from([(u, v) for u, v in list(G.edges) if u < n // 10])  # dangling nodes
    for u, v in G.edges:
        G[u][v]["weight"] = float(rng.uniform(0.1, 5))
    return G


@pytest.mark.parametrize("check_every", [1, 3, 8])
@pytest.mark.parametrize("case", ["plain", "personalized", "dangling"])
def test_gpu_pagerank_matches_networkx(case, check_every):
    G = _digraph(7)
    rng = np.random.default_rng(1)
    kwargs = {}
    if case != "plain":
        kwargs["personalization"] = {int(k): float(rng.uniform()) for k in rng.choice(len(G), 300, replace=False)}
    if case == "dangling":
        kwargs["dangling"] = {int(k): float(rng.uniform()) for k in rng.choice(len(G), 50, replace=False)}
    for tol in (1e-6, 1e-10):
        reference = nx.pagerank(G, tol=tol, **kwargs)
        ranks, info = spla.pagerank(G, tol=tol, device="gpu", check_every=check_every, full_output=True, **kwargs)
        _, cpu_info = spla.pagerank(G, tol=tol, device="cpu", full_output=True, **kwargs)
        assert info["device"] == "gpu" and info["gpu_build"] == "device"
        assert info["iterations"] == cpu_info["iterations"]
        assert max(abs(ranks[k] - reference[k]) for k in G) < 1e-6 * (1e-3 if tol < 1e-8 else 1)


def test_gpu_pagerank_with_int64_indices_builds_on_the_host():
    """cuSPARSE's transpose takes int32 indices only: int64 matrices build P with SciPy, same ranks."""
    S = nx.to_scipy_sparse_array(_digraph(5), dtype=float)
    A = CSRMatrix.from_scipy(S, index_dtype=np.int64)
    ranks, info = spla.pagerank(A, tol=1e-10, device="gpu", full_output=True)
    expected = spla.pagerank(CSRMatrix.from_scipy(S), tol=1e-10, device="cpu")
    assert info["gpu_build"] == "host"
    np.testing.assert_allclose(ranks, expected, rtol=1e-9, atol=1e-12)


def _hub_adjacency(n=6000, seed=11):
    """Random weighted digraph plus a hub that n / 2 nodes link to: A^T has a row of over 1024
    entries, so the SpMV the iteration runs is not the short-row kernel."""
    rng = np.random.default_rng(seed)
    G = _digraph(seed, n)
    for u in rng.choice(n, n // 2, replace=False):
        if u != 0:
            G.add_edge(int(u), 0, weight=float(rng.uniform(0.1, 5)))
    return G, CSRMatrix.from_scipy(nx.to_scipy_sparse_array(G, nodelist=list(G)))


def test_gpu_pagerank_hub_graph():
    from spla.graph import device_google_parts
    from spla.planning import spmv as rules

    G, A = _hub_adjacency()
    reference = nx.pagerank(G, tol=1e-10)
    ranks, info = spla.pagerank(A, tol=1e-10, device="gpu", full_output=True)
    assert isinstance(ranks, np.ndarray) and info["gpu_build"] == "device"
    assert float(np.abs(ranks - np.array([reference[k] for k in G])).max()) < 1e-9
    # the long row sends auto past the short-row kernel (to a load-balanced one)
    assert rules.choose_kernel(device_google_parts(A, np.float64).matrix) != "scalar"


def test_gpu_pagerank_device_parts_match_host_build():
    import cupy

    from spla.graph import device_google_parts, google_matrix_parts

    _, A = _hub_adjacency(3000, seed=5)
    S = A.to_scipy()
    parts = device_google_parts(A, np.float64)
    out_weight = np.asarray(S.sum(axis=1)).ravel()
    dangling = out_weight == 0
    assert dangling.any()
    np.testing.assert_array_equal(parts.is_dangling.get(), dangling.astype(np.uint8))
    expected_scale = np.divide(1.0, out_weight, out=np.zeros_like(out_weight), where=~dangling)
    # The device sums each row in SciPy's order, but NVRTC may contract the
    # divide/accumulate differently: the H200 run differed from SciPy by 1 ulp.
    np.testing.assert_allclose(parts.scale.get(), expected_scale, rtol=4 * np.finfo(np.float64).eps, atol=0)
    AT = parts.matrix.to_scipy()
    assert AT.shape == S.shape and abs(AT - S.T).max() == 0 and AT.nnz == S.nnz
    # A^T diag(scale) is exactly the P the host build makes (one rounding each way)
    P, host_dangling = google_matrix_parts(A, np.float64)
    np.testing.assert_array_equal(host_dangling, dangling)
    assert abs(AT @ sp.diags(expected_scale) - P.to_scipy()).max() <= 1e-17
    assert device_google_parts(A, np.float64) is parts  # cached on A's device copy
    float32_parts = device_google_parts(A, np.float32)
    assert float32_parts.matrix.dtype == np.float32 and float32_parts is not parts
    assert isinstance(parts.scale, cupy.ndarray)


def test_gpu_pagerank_repeat_calls_reuse_the_build(monkeypatch):
    from spla import graph

    builds = []
    real_parts = graph.DeviceGoogleParts
    monkeypatch.setattr(graph, "DeviceGoogleParts", lambda *args: builds.append(1) or real_parts(*args))
    _, A = _hub_adjacency(3000, seed=6)
    first, info1 = spla.pagerank(A, tol=1e-10, device="gpu", full_output=True)
    second, info2 = spla.pagerank(A, tol=1e-10, device="gpu", full_output=True)
    np.testing.assert_array_equal(first, second)
    assert info1["iterations"] == info2["iterations"]
    for key in ("upload_seconds", "build_seconds", "seconds", "download_seconds", "total_seconds"):
        assert info2[key] >= 0
    assert info2["total_seconds"] >= info2["seconds"]
    assert len(builds) == 1  # the second call found A^T and the scales cached on the matrix


def test_gpu_pagerank_edge_cases():
    import cupy

    # no edges: every node dangling, ranks = the teleport distribution
    n = 257
    empty = CSRMatrix.from_scipy(sp.csr_matrix((n, n)))
    ranks, info = spla.pagerank(empty, device="gpu", full_output=True)
    np.testing.assert_allclose(ranks, np.full(n, 1.0 / n), rtol=1e-14)
    p = np.random.default_rng(0).uniform(size=n)
    np.testing.assert_allclose(spla.pagerank(empty, personalization=p, device="gpu"), p / p.sum(), rtol=1e-12)
    # int64 indices: cuSPARSE's transpose takes int32 only, so the host build is used
    G = _digraph(4, 1500)
    A64 = CSRMatrix.from_scipy(nx.to_scipy_sparse_array(G, nodelist=list(G)), index_dtype=np.int64)
    ranks, info = spla.pagerank(A64, tol=1e-10, device="gpu", full_output=True)
    reference = nx.pagerank(G, tol=1e-10)
    assert info["gpu_build"] == "host"
    assert float(np.abs(ranks - np.array([reference[k] for k in G])).max()) < 1e-9
    # a matrix already on the GPU: CuPy out, built there
    dev = CSRMatrix.from_scipy(nx.to_scipy_sparse_array(G, nodelist=list(G))).to_device()
    ranks_dev, info = spla.pagerank(dev, tol=1e-10, full_output=True)
    assert isinstance(ranks_dev, cupy.ndarray) and info["gpu_build"] == "device"
    assert float(np.abs(ranks_dev.get() - ranks).max()) < 1e-15


def test_gpu_pagerank_cupy_in_cupy_out_and_float32():
    import cupy
    import cupyx.scipy.sparse as csp

    G = _digraph(3)
    A = nx.to_scipy_sparse_array(G, nodelist=list(G))
    reference = np.array([nx.pagerank(G, tol=1e-10)[k] for k in G])
    ranks = spla.pagerank(csp.csr_matrix(sp.csr_matrix(A)), tol=1e-10)
    assert isinstance(ranks, cupy.ndarray)
    assert float(abs(ranks.get() - reference).max()) < 1e-9
    ranks32 = spla.pagerank(A, tol=1e-8, device="gpu", dtype=np.float32, max_iter=200)
    assert isinstance(ranks32, np.ndarray) and ranks32.dtype == np.float32
    assert float(abs(ranks32 - reference).max()) < 1e-5
