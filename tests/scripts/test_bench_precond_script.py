"""scripts/bench_precond.py's AMG parts on the CPU at small sizes: the run's checks pass, the
total is set-up + prepare + solve, and amg_iterations compares spla's hierarchy with pyamg's."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_precond.py"
spec = importlib.util.spec_from_file_location("bench_precond", SCRIPT)
bench_precond = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench_precond)


def test_amg_parts_on_the_cpu(tmp_path, capsys):
    pytest.importorskip("pyamg")
    code = bench_precond.main(["--quick", "--device", "cpu", "--parts", "amg,amg_iterations",
                               "--iteration-sizes", "12,48", "--out", str(tmp_path)])
    assert code == 0
    report = json.loads((tmp_path / "bench_precond.json").read_text())
    amg = report["amg"]["amg_cg"]
    assert amg["ok"] and amg["info"] == 0 and amg["relative_residual"] <= 1.01e-8
    assert amg["total_seconds"] == pytest.approx(amg["setup_seconds"] + amg["prepare_seconds"] + amg["solve_seconds"])
    assert amg["check_every"] == 1 and amg["setup_host_reads"] > 0 and amg["levels"][0] == 128 * 128
    assert report["amg"]["amg_cg_cold"]["iterations"] == amg["iterations"]  # the same hierarchy both times
    assert amg["iterations"] < report["amg"]["plain_cg"]["iterations"] / 3
    ones = report["amg"]["ones"]  # the smooth right-hand side: plain CG needs fewer iterations than for random b
    assert ones["amg_cg"]["ok"] and ones["plain_cg"]["ok"]
    assert ones["plain_cg"]["iterations"] < report["amg"]["plain_cg"]["iterations"]
    problems = report["amg_iterations"]
    assert [p["n"] for p in problems] == [12**3, 48**2]
    for entry in problems:
        assert entry["iterations_ratio"] == entry["spla"]["iterations"] / entry["pyamg"]["iterations"]
        assert all(entry[k]["ok"] for k in ("spla", "spla_default_max_coarse", "pyamg"))
    assert "AMG-CG (setup='spla')" in capsys.readouterr().out


def test_trisolve_part_times_both_cpu_plans_and_fits_the_cut_on_half(tmp_path, capsys):
    import scipy.io
    import scipy.sparse as sp

    real = tmp_path / "real"
    real.mkdir()
    line = sp.diags([-1.0, 2.5, -1.0], [-1, 0, 1], shape=(400, 400))
    scipy.io.mmwrite(str(real / "tridiagonal.mtx"), line)
    scipy.io.mmwrite(str(real / "rectangle.mtx"), sp.random(5, 7, density=0.5, random_state=0))
    code = bench_precond.main(["--quick", "--device", "cpu", "--parts", "trisolve", "--real", str(real),
                               "--out", str(tmp_path)])
    assert code == 0
    report = json.loads((tmp_path / "bench_precond.json").read_text())["trisolve"]
    assert "not square" in report["skipped"][str(real / "rectangle.mtx")]
    rows = report["rows"]
    # 2 matrices (the line, gen:poisson2d:128) x 2 orderings x 2 triangles
    assert len(rows) == 8 and all(r["ok"] for r in rows)
    assert all(r[f"{plan}_seconds"] > 0 for r in rows for plan in ("sweep", "superlu", "scipy"))
    line_natural = [r for r in rows if r["source"].endswith("tridiagonal.mtx") and r["ordering"] == "natural"]
    assert [r["levels"] for r in line_natural] == [400, 400]  # a chain: a level a row
    assert report["fit"]["triangles"] + report["held_out"]["triangles"] == 8
    assert report["fit"]["geomean_over_best"] >= 1.0
    assert "the other half" in capsys.readouterr().out
