"""`spla pagerank`'s defaults converge, and an early stop is reported (issue 21, point 1)."""

from __future__ import annotations

import json

import networkx as nx
import numpy as np
import scipy.sparse as sp
from click.testing import CliRunner

from spla.cli import main


def _run(args):
    result = CliRunner().invoke(main, ["pagerank", *args, "--device", "cpu", "--json"])
    assert result.exit_code == 0, result.output
    return result


def _json(result):
    text = result.stdout  # the warning (stderr) has no brace; older click mixes it in
    return json.loads(text[text.index("{"):])


def test_default_ranking_is_networkx_converged_ranking(tmp_path, rng):
    # a graph where networkx's own default (tol 1e-6, N = 3000) stops at iteration 1 or 2
    n = 3000
    A = sp.random(n, n, density=4 / n, format="csr", random_state=np.random.default_rng(rng.integers(1 << 30)))
    A.data[:] = 1.0
    path = tmp_path / "g.npz"
    sp.save_npz(path, A)
    data = _json(_run([str(path), "--top", "20"]))
    G = nx.from_scipy_sparse_array(A, create_using=nx.DiGraph)
    reference = nx.pagerank(G, tol=1e-13, max_iter=1000)
    want = sorted(reference, key=lambda k: (-reference[k], k))[:20]
    assert [t["node"] for t in data["top"]] == want
    assert data["iterations"] > 2 and not data["few_iterations"]
    assert data["error"] < data["l1_threshold"] == n * data["tol"]
    early = _run([str(path), "--top", "20", "--tol", "1e-3"])
    assert _json(early)["few_iterations"] and _json(early)["iterations"] <= 2


def test_text_output_names_iterations_change_and_warns_on_early_stop():
    result = CliRunner().invoke(main, ["pagerank", "gen:random:2000:4", "--device", "cpu", "--tol", "1e-2"])
    assert result.exit_code == 0, result.output
    assert "warning: PageRank stopped after 1 iteration" in result.output
    assert "final L1 change" in result.output and "N * tol" in result.output
    quiet = CliRunner().invoke(main, ["pagerank", "gen:random:2000:4", "--device", "cpu"])
    assert quiet.exit_code == 0 and "warning" not in quiet.output
    line = next(ln for ln in quiet.output.splitlines() if ln.startswith("iterations"))
    assert int(line.split()[1]) > 2
