"""spla.pagerank against networkx.pagerank (CPU), and the solve/pagerank CLI."""

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
