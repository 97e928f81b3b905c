"""spla.pagerank against networkx.pagerank on the CPU and (marked ``gpu``) the GPU, with the GPU's
device build of the Google matrix, and the solve/pagerank CLI."""

from __future__ import annotations

import json

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner

import spla
from spla import CSRMatrix, InputError
from spla.cli import main
from spla.graph import PowerIterationFailedConvergence


def _random_digraph(rng, n=400, p=0.01, n_dangling=40, weighted=True):
    G = nx.gnp_random_graph(n, p, directed=True, seed=int(rng.integers(1 << 30)))
    G.remove_edges_from([(u, v) for u, v in list(G.edges) if u < n_dangling])  # sure dangling nodes
    G.add_nodes_from(range(n, n + 5))  # isolated nodes, also dangling
    if weighted:
        for u, v in G.edges:
            G[u][v]["weight"] = float(rng.uniform(0.1, 5.0))
    return G


def _max_diff(a: dict, b: dict) -> float:
    assert a.keys() == b.keys()
    return max(abs(a[k] - b[k]) for k in a)


@pytest.mark.parametrize("case", ["plain", "weighted", "personalized", "dangling-dict", "nstart", "alpha"])
def test_matches_networkx(rng, case):
    G = _random_digraph(rng, weighted=case != "plain")
    kwargs = {}
    if case in ("personalized", "dangling-dict"):
        kwargs["personalization"] = {int(k): float(rng.uniform()) for k in rng.choice(len(G), 50, replace=False)}
    if case == "dangling-dict":
        kwargs["dangling"] = {int(k): float(rng.uniform()) for k in rng.choice(len(G), 20, replace=False)}
    if case == "nstart":
        kwargs["nstart"] = {k: float(rng.uniform()) for k in G}
    if case == "alpha":
        kwargs["alpha"] = 0.5
    reference = nx.pagerank(G, tol=1e-10, **kwargs)
    ranks = spla.pagerank(G, tol=1e-10, device="cpu", **kwargs)
    assert _max_diff(ranks, reference) < 1e-6 * 1e-3
    # at networkx's default tol too (the same iterate, so the same stopping point)
    assert _max_diff(spla.pagerank(G, device="cpu", **kwargs), nx.pagerank(G, **kwargs)) < 1e-6


def test_unweighted_and_undirected(rng):
    G = _random_digraph(rng)
    assert _max_diff(spla.pagerank(G, weight=None, device="cpu"), nx.pagerank(G, weight=None)) < 1e-12
    U = nx.gnp_random_graph(200, 0.03, seed=4)
    assert _max_diff(spla.pagerank(U, device="cpu"), nx.pagerank(U)) < 1e-12


@pytest.mark.parametrize("kind", ["csr", "scipy", "dense"])
def test_matrix_input_returns_vector(rng, kind):
    G = _random_digraph(rng)
    nodes = list(G)
    A = nx.to_scipy_sparse_array(G, nodelist=nodes, weight="weight", dtype=float)
    operand = {"csr": lambda: CSRMatrix.from_scipy(A), "scipy": lambda: sp.csr_matrix(A),
               "dense": lambda: A.toarray()}[kind]()
    ranks, info = spla.pagerank(operand, device="cpu", full_output=True)
    reference = nx.pagerank(G)
    assert isinstance(ranks, np.ndarray) and ranks.shape == (len(nodes),)
    assert np.abs(ranks - np.array([reference[k] for k in nodes])).max() < 1e-6
    assert info["iterations"] >= 1 and info["device"] == "cpu"
    assert abs(ranks.sum() - 1) < 1e-12


def test_float32(rng):
    G = _random_digraph(rng)
    ranks = spla.pagerank(nx.to_scipy_sparse_array(G), dtype=np.float32, device="cpu")
    assert ranks.dtype == np.float32
    reference = nx.pagerank(G)
    assert np.abs(ranks - np.array([reference[k] for k in G])).max() < 1e-5


def test_nonconvergence_raises_like_networkx(rng):
    G = _random_digraph(rng)
    with pytest.raises(PowerIterationFailedConvergence):
        spla.pagerank(G, tol=1e-15, max_iter=3, device="cpu")
    with pytest.raises(nx.PowerIterationFailedConvergence):  # catchable as networkx's error too
        spla.pagerank(G, tol=1e-15, max_iter=3, device="cpu")


def test_bad_arguments():
    A = sp.random(5, 5, density=0.5, format="csr", random_state=0)
    with pytest.raises(InputError):
        spla.pagerank(A, personalization=np.zeros(5), device="cpu")
    with pytest.raises(InputError):
        spla.pagerank(sp.random(5, 4, density=0.5, format="csr"), device="cpu")
    with pytest.raises(InputError):
        spla.pagerank(A, device="tpu")
    assert spla.pagerank(nx.DiGraph()) == {}


def test_full_output_times_and_cached_build(rng):
    from spla.graph import google_matrix_parts

    G = _random_digraph(rng)
    A = CSRMatrix.from_scipy(nx.to_scipy_sparse_array(G, nodelist=list(G)))
    ranks, info = spla.pagerank(A, device="cpu", full_output=True)
    for key in ("seconds", "seconds_per_iteration", "convert_seconds", "upload_seconds", "build_seconds",
                "download_seconds", "total_seconds"):
        assert info[key] >= 0, key
    assert info["total_seconds"] >= info["seconds"] + info["build_seconds"]
    assert info["gpu_build"] is None and info["upload_seconds"] == 0
    P, dangling = google_matrix_parts(A, np.float64)
    assert google_matrix_parts(A, np.float64)[0] is P  # built once per matrix and dtype
    assert google_matrix_parts(A, np.float32)[0].dtype == np.float32
    np.testing.assert_array_equal(spla.pagerank(A, device="cpu"), ranks)  # the cached build, same answer


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_host_google_matrix_is_scipys_diagonal_product(rng, dtype):
    """P = (D^-1 A)^T scaled row by row in place gives what SciPy's diags(1 / out-weight) @ A
    gives, bit for bit: entries, order and the zeros it drops (explicit zeros, an empty row, a row
    whose weights sum to zero and so scale by 0)."""
    from spla.graph import google_matrix_parts

    S = sp.random(300, 300, density=0.03, format="lil", random_state=rng)
    S[5, :] = 0
    S[6, :] = 0
    S[6, 1], S[6, 2] = 1.0, -1.0
    S = S.tocsr()
    S.data[::17] = 0.0  # explicit zeros, kept by tocsr
    S.data[S.indptr[6]:S.indptr[7]] = [1.0, -1.0]  # whatever the line above hit
    out_weight = np.asarray(S.sum(axis=1)).ravel()
    scale = np.divide(1.0, out_weight, out=np.zeros_like(out_weight), where=out_weight != 0)
    want = (sp.diags(scale) @ S).T.tocsr().astype(dtype)
    P, dangling = google_matrix_parts(CSRMatrix.from_scipy(S), dtype)
    got = P.to_scipy()
    assert dangling[5] and dangling[6] and not dangling[0]
    for part in ("indptr", "indices", "data"):
        np.testing.assert_array_equal(getattr(got, part), getattr(want, part))


# ---------------------------------------------------------------- CLI
def test_cli_solve_json():
    result = CliRunner().invoke(main, ["solve", "gen:poisson2d:32", "--method", "cg", "--rtol", "1e-8",
                                       "--device", "cpu", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["converged"] and data["relative_residual"] <= 1.01e-8 and data["iterations"] > 10


@pytest.mark.parametrize("method", ["bicgstab", "gmres", "minres"])
def test_cli_solve_methods_table(method, tmp_path):
    rhs = tmp_path / "b.npy"
    np.save(rhs, np.random.default_rng(0).standard_normal(32 * 32))
    result = CliRunner().invoke(main, ["solve", "gen:poisson2d:32", "--method", method, "--rhs", str(rhs),
                                       "--precond", "jacobi", "--device", "cpu"])
    assert result.exit_code == 0, result.output
    per = "per restart cycle" if method == "gmres" else "per iteration"
    assert "converged (info 0)" in result.output and per in result.output


def test_cli_solve_bad_rhs_is_one_line_error(tmp_path):
    result = CliRunner().invoke(main, ["solve", "gen:poisson2d:8", "--rhs", str(tmp_path / "none.npy"),
                                       "--device", "cpu"])
    assert result.exit_code == 2 and "spla: error: --rhs" in result.output


def test_cli_solve_plot(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "conv.png"
    result = CliRunner().invoke(main, ["solve", "gen:poisson2d:16", "--device", "cpu", "--plot", str(out)])
    assert result.exit_code == 0, result.output
    assert out.stat().st_size > 1000


def test_cli_pagerank_top():
    result = CliRunner().invoke(main, ["pagerank", "gen:random:2000:4", "--top", "5", "--tol", "1e-10",
                                       "--device", "cpu", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    A = spla.load("gen:random:2000:4")
    ranks = spla.pagerank(A, tol=1e-10, device="cpu")
    assert [t["node"] for t in data["top"]] == list(np.argsort(-ranks, kind="stable")[:5])
    text = CliRunner().invoke(main, ["pagerank", "gen:random:2000:4", "--top", "3", "--device", "cpu"])
    assert text.exit_code == 0 and text.output.count("\n") >= 6


# ---------------------------------------------------------------- PageRank on the GPU
def _digraph(seed, n=3000):
    rng = np.random.default_rng(seed)
    G = nx.gnp_random_graph(n, 4.0 / n, directed=True, seed=seed)
    G.remove_edges_from([(u, v) for u, v in list(G.edges) if u < n // 10])  # dangling nodes
    for u, v in G.edges:
        G[u][v]["weight"] = float(rng.uniform(0.1, 5))
    return G


@pytest.mark.gpu
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


@pytest.mark.gpu
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


@pytest.mark.gpu
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


@pytest.mark.gpu
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


@pytest.mark.gpu
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


@pytest.mark.gpu
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


@pytest.mark.gpu
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
