"""`spla solve --precond ...`: converges and reports the set-up time apart."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from spla.cli import main


@pytest.mark.parametrize("precond,method", [("amg", "cg"), ("ic0", "cg"), ("ilu0", "bicgstab"), ("none", "cg")])
def test_solve_with_each_preconditioner(precond, method):
    if precond == "amg":
        pytest.importorskip("pyamg")
    result = CliRunner().invoke(main, ["solve", "gen:poisson2d:24", "--precond", precond, "--method", method,
                                       "--device", "cpu", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["converged"] and report["relative_residual"] <= 1e-8
    assert report["precond"] == precond and report["setup_seconds"] >= 0


@pytest.mark.parametrize("precond,method", [("none", "cg"), ("jacobi", "cg"), ("ic0", "cg"), ("none", "bicgstab")])
def test_a_cpu_cg_says_how_it_runs(monkeypatch, precond, method):
    """The C loop and its threads where cg takes it (no preconditioner or Jacobi), else NumPy's steps;
    other solvers say nothing."""
    import numpy as np

    from spla.io import native

    monkeypatch.setenv("SPLA_NUM_THREADS", "2")
    args = ["solve", "gen:poisson2d:100", "--precond", precond, "--method", method, "--device", "cpu"]
    report = json.loads(CliRunner().invoke(main, [*args, "--json"]).output)
    text = CliRunner().invoke(main, args).output
    if method != "cg":
        assert "runs" not in report and "runs " not in text
        return
    looped = precond != "ic0" and native.cg_loop_kernel(np.float64, np.int32) is not None
    expected = "C loop on 2 threads (spla/backends/cg_loop.c)" if looped else "NumPy's steps (SciPy's arithmetic)"
    assert report["runs"] == expected and f"runs          {expected}" in text


def test_ic0_on_a_nonsymmetric_matrix_is_one_line():
    result = CliRunner().invoke(main, ["solve", "gen:random:50:4", "--precond", "ic0", "--device", "cpu"])
    assert result.exit_code != 0
    assert result.output.strip().startswith("spla: error:") and "symmetric" in result.output


def _gram_matrix(tmp_path):
    """R R^T + 0.01 I for a sparse R of +-1 entries: symmetric positive definite, and its IC(0)
    meets negative pivots in both orderings (a normal-equations matrix, like a stiffness matrix)."""
    import numpy as np
    import scipy.io
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    R = sp.random(60, 60, density=0.1, random_state=0, format="csr")
    R.data = np.sign(rng.standard_normal(R.nnz))
    A = (R @ R.T + 0.01 * sp.eye(60)).tocsr()
    A.data[np.abs(A.data) < 1e-12] = 0.0
    A.eliminate_zeros()
    path = tmp_path / "gram.mtx"
    scipy.io.mmwrite(str(path), A)
    return str(path)


def test_ic0_says_how_far_it_shifted_the_diagonal(tmp_path):
    source = _gram_matrix(tmp_path)
    result = CliRunner().invoke(main, ["solve", source, "--precond", "ic0", "--device", "cpu"])
    assert result.exit_code == 0, result.output
    assert "converged" in result.output and "(precond ic0, diagonal shifted by 0.064 diag(A))" in result.output
    report = json.loads(CliRunner().invoke(main, ["solve", source, "--precond", "ic0", "--device", "cpu",
                                                  "--json"]).stdout)
    assert report["converged"] and report["ic0_shift"] == 0.064


def test_ilu0_under_cg_warns_that_its_pivots_are_not_all_positive(tmp_path):
    source = _gram_matrix(tmp_path)
    result = CliRunner().invoke(main, ["solve", source, "--precond", "ilu0", "--method", "cg", "--device", "cpu"])
    assert "spla: warning: ilu0 has 5 pivots <= 0" in result.stderr and "--precond ic0" in result.stderr
    quiet = CliRunner().invoke(main, ["solve", "gen:poisson2d:24", "--precond", "ilu0", "--method", "cg",
                                      "--device", "cpu"])
    assert quiet.exit_code == 0 and "warning" not in quiet.stderr


def test_a_long_cpu_solve_rewrites_one_progress_line():
    import io

    from spla.cli.solve import Progress
    from spla.linalg import IterationCounter

    ticks = iter([0.0, 0.4, 1.1, 1.5, 2.3, 2.4])
    stream = io.StringIO()
    progress = Progress(IterationCounter(), "cg", "iterations", stream=stream, clock=lambda: next(ticks))
    for _ in range(5):
        progress(None)
    assert progress.counter.iterations == 5
    assert stream.getvalue() == "\rcg: 2 iterations, 1 s\rcg: 4 iterations, 2 s"
    progress.clear()
    assert stream.getvalue().endswith("\r\x1b[K")
    quiet = io.StringIO()
    Progress(IterationCounter(), "cg", "iterations", stream=quiet, clock=lambda: 0.0).clear()
    assert quiet.getvalue() == ""  # nothing shown, nothing to erase
