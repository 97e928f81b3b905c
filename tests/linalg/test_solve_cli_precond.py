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


def test_ic0_on_a_nonsymmetric_matrix_is_one_line():
    result = CliRunner().invoke(main, ["solve", "gen:random:50:4", "--precond", "ic0", "--device", "cpu"])
    assert result.exit_code != 0
    assert result.output.strip().startswith("spla: error:") and "symmetric" in result.output
