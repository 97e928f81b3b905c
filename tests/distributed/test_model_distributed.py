"""scripts/model_distributed.py: its measured partitions and analytic scaling, on small instances."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "model_distributed.py"


@pytest.fixture(scope="module")
def model():
    spec = importlib.util.spec_from_file_location("model_distributed", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_stencil_ghosts_are_the_neighbouring_grid_lines(model):
    n = 40
    ranks = model.measure(model.stencil(n, 2, 5), 4, gpus_per_node=2)
    # a 5-point row block needs the n columns before it and the n after it
    assert [r["ghosts"] for r in ranks] == [n, 2 * n, 2 * n, n]
    assert [r["neighbours"] for r in ranks] == [1, 2, 2, 1]
    assert [r["off_node_share"] for r in ranks] == [0.0, 0.5, 0.5, 0.0]
    assert sum(r["nnz"] for r in ranks) == model.stencil(n, 2, 5).nnz


def test_rmat_distinct_column_formula_matches_a_generated_graph(model):
    from spla.io.generators import rmat

    scale, edge_factor = 11, 8
    graph = rmat(scale, edge_factor, seed=3).to_scipy()
    for parts in (2, 4):
        measured = np.mean([r["ghosts"] for r in model.measure(graph, parts, gpus_per_node=8)])
        predicted = model.expected_ghosts(scale, graph.nnz, parts)
        assert 0.75 < measured / predicted < 1.25, (parts, measured, predicted)


def test_single_gpu_time_is_bytes_over_bandwidth(model):
    machine = model.Machine(hbm_gbs=1000.0, launch_us=0.0)
    layout = model.Layout(rows=1e6, nnz=1e7, ghosts=0.0, offdiag_nnz=0.0, neighbours=0, off_node_share=0.0)
    times = model.spmv_seconds(layout, 1, machine, efficiency=0.5)
    expected = (12 * 1e7 + 4 * (1e6 + 1) + 8 * 1e6 + 8 * 1e6) / 0.5e12
    assert times["exchange"] == 0.0
    assert times["spmv"] == pytest.approx(expected)


def test_quick_run_predicts_all_cases_and_writes_markdown(model, capsys):
    results = model.model(model.Machine(), [2, 4, 8], quick=True)
    assert set(results) == {"stencil27-3d", "stencil5-2d", "rmat"}
    for result in results.values():
        for kind in ("strong", "weak"):
            rows = result[kind]
            assert [r["gpus"] for r in rows] == [1, 2, 4, 8]
            assert all(0 < r["spmv_efficiency"] <= 1.0 + 1e-9 for r in rows)
        strong = result["strong"]
        assert all(a["spmv"] > b["spmv"] for a, b in zip(strong, strong[1:]))
    assert results["stencil27-3d"]["strong"][0]["rows"] >= 500e6
    assert model.main(["--quick", "--gpus", "2,4"]) == 0
    out = capsys.readouterr().out
    assert out.count("strong scaling") == 3 and out.count("weak scaling") == 3
