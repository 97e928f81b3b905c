"""scripts/suite_report.py on three small generated matrices on the CPU."""

from __future__ import annotations

import csv
import importlib.util
import json
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "suite_report.py"
SPECS = ["gen:poisson2d:40", "gen:random:3000:7", "gen:powerlaw:5000:6:300"]


@pytest.fixture(scope="module")
def suite_report():
    spec = importlib.util.spec_from_file_location("suite_report", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["suite_report"] = module
    spec.loader.exec_module(module)
    return module


def read_csv(path):
    with open(path, newline="") as stream:
        return list(csv.DictReader(stream))


def test_three_generated_matrices_on_cpu(suite_report, tmp_path, capsys):
    code = suite_report.main([*SPECS, "--device", "cpu", "--repeat", "3", "--out", str(tmp_path), "--no-spy"])
    assert code == 0
    doc = json.loads((tmp_path / "suite.json").read_text())
    assert [m["source"] for m in doc["matrices"]] == SPECS
    assert doc["failures"] == [] and doc["meta"]["device"] == "cpu"
    for key in ("date", "numpy", "scipy", "device_name", "command"):
        assert doc["meta"][key]
    analysis = read_csv(tmp_path / "analysis.csv")
    assert list(analysis[0]) == suite_report.ANALYSIS_COLUMNS
    assert [row["matrix"] for row in analysis] == ["poisson2d-40", "random-3000-7", "powerlaw-5000-6-300"]
    assert int(analysis[0]["nnz"]) == 5 * 40 * 40 - 4 * 40
    assert int(analysis[2]["row_max"]) == 300
    kernels = read_csv(tmp_path / "kernels.csv")
    assert list(kernels[0]) == suite_report.KERNEL_COLUMNS
    assert len(kernels) == 6 and [row["kernel"] for row in kernels] == ["scipy", "auto"] * 3
    for row in kernels:
        assert float(row["ms"]) > 0 and float(row["gbps"]) > 0 and float(row["gflops"]) > 0
        assert row["ok"] == "True" and float(row["scaled_error"]) < 1e-5
    out = capsys.readouterr().out
    assert "| matrix | rows | nnz |" in out and "random-3000-7" in out
    if importlib.util.find_spec("matplotlib") is not None:
        for name in ("throughput.png", "roofline.png", "rows_poisson2d-40.png", "rows_powerlaw-5000-6-300.png"):
            data = (tmp_path / name).read_bytes()
            assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 2000, name


def test_a_failing_matrix_is_reported_and_skipped(suite_report, tmp_path, capsys):
    code = suite_report.main(["gen:poisson2d:10", "gen:random:10:20", str(tmp_path / "missing.mtx"),
                              "--device", "cpu", "--repeat", "2", "--out", str(tmp_path), "--no-plots"])
    assert code == 0
    doc = json.loads((tmp_path / "suite.json").read_text())
    assert len(doc["matrices"]) == 1
    assert [f["matrix"] for f in doc["failures"]] == ["random-10-20", "missing"]
    assert "0 <= K <= N" in doc["failures"][0]["error"]
    err = capsys.readouterr().err
    assert "[2/3] random-10-20: FAILED, skipped" in err


def test_folder_and_suite_expansion(suite_report, tmp_path):
    (tmp_path / "b.mtx").write_text("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1.0\n")
    (tmp_path / "a.mtx.gz").write_bytes(b"")
    (tmp_path / "notes.md").write_text("x")
    sources = suite_report.expand_sources([str(tmp_path), "suite:ci", "gen:weblike", "gen:weblike"])
    assert sources[:2] == [str(tmp_path / "a.mtx.gz"), str(tmp_path / "b.mtx")]
    assert sources[2:] == suite_report.SUITES["ci"] + ["gen:weblike"]
    assert suite_report.label_for("matrices/web-Google.mtx.gz") == "web-Google"
    assert suite_report.label_for("gen:blockdense:10:2:5:0.5") == "blockdense-10-2-5-0.5"
