"""scripts/bench_spgemm.py: the host comparison with SciPy (CPU), the cupyx comparison and the
per-stage breakdown of a new-matrix call (GPU), each on the quick grid."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_spgemm.py"
spec = importlib.util.spec_from_file_location("bench_spgemm", SCRIPT)
bench_spgemm = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench_spgemm)


def _record(tmp_path, *args):
    assert bench_spgemm.main(["--quick", "--out", str(tmp_path), *args]) == 0
    return json.loads((tmp_path / "bench_spgemm.json").read_text())


def test_host_comparison_checks_and_times_every_contender(tmp_path):
    record = _record(tmp_path, "--cpu")
    assert {(row["way"], row["contender"]) for row in record["rows"]} == {
        (way, who) for way in ("same matrix", "new matrix") for who in ("spla", "scipy")}
    assert all(row["error"] is None and row["seconds"] > 0 for row in record["rows"])
    assert record["stages"] == []  # the breakdown is the GPU's


@pytest.mark.gpu
def test_gpu_breakdown_names_each_stage_of_both_sides(tmp_path):
    record = _record(tmp_path, "--dtype", "float32")
    assert all(row["error"] is None for row in record["rows"])
    stages = {(row["contender"], row["stage"]): row for row in record["stages"]}
    assert set(stages) == ({("spla", s) for s in bench_spgemm.SPLA_STAGES}
                           | {("cupyx", s) for s in bench_spgemm.CUPYX_STAGES})
    assert all(row["device_seconds"] >= 0 and row["host_seconds"] >= 0 for row in stages.values())
    spla_call = sum(stages[("spla", s)]["device_seconds"] for s in bench_spgemm.SPLA_STAGES)
    assert spla_call > 0 and stages[("spla", "cuSPARSE")]["device_seconds"] > 0
