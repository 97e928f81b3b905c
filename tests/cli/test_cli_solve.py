"""spla solve as a tool: the method chosen from symmetry, exit codes, x written out, paths checked first."""

from __future__ import annotations

import json

import numpy as np
import scipy.sparse as sp
from click.testing import CliRunner

from spla.cli import main
from spla.io import mmio


def _run(*args):
    result = CliRunner().invoke(main, ["solve", *map(str, args)])
    return result.exit_code, result.stdout, result.stderr


def test_auto_picks_cg_for_symmetric_and_writes_x(tmp_path):
    out = tmp_path / "x.npy"
    code, stdout, _ = _run("gen:poisson2d:16", "--device", "cpu", "--out", out, "--json")
    result = json.loads(stdout)
    assert code == 0 and result["method"] == "cg" and result["converged"]
    x = np.load(out)
    assert x.shape == (256,) and result["relative_residual"] < 1e-7


def test_a_nonsymmetric_matrix_gets_gmres_and_a_warning_for_cg(tmp_path):
    path = tmp_path / "n.mtx"
    A = sp.random(60, 60, density=0.1, random_state=1, format="csr") + sp.eye(60) * 4
    mmio.write_mtx(path, A)
    code, stdout, _ = _run(path, "--device", "cpu", "--json")
    assert code == 0 and json.loads(stdout)["method"] == "gmres"
    _, _, stderr = _run(path, "--device", "cpu", "--method", "cg")
    assert "not symmetric" in stderr


def test_not_converged_exits_1_after_printing_and_says_per_restart_cycle(tmp_path):
    path = tmp_path / "n.mtx"
    mmio.write_mtx(path, sp.random(80, 80, density=0.2, random_state=2, format="csr"))
    code, stdout, stderr = _run(path, "--device", "cpu", "--method", "gmres", "--maxiter", "2")
    assert code == 1 and "per restart cycle" in stdout and "did not converge" in stderr


def test_a_bad_output_path_fails_before_the_solve(tmp_path):
    code, stdout, stderr = _run("gen:poisson2d:16", "--device", "cpu", "--out", tmp_path / "missing" / "x.npy")
    assert code == 2 and stdout == "" and "does not exist" in stderr
