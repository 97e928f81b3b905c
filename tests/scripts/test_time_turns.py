"""scripts/time_turns.py: kernel-list checks (CPU) and one run in turns beside cuSPARSE (GPU)."""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import types
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import spla
from spla import bench
from spla.bench import corpus, timing
from spla.ops import spmv as ops_spmv

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "time_turns.py"
spec = importlib.util.spec_from_file_location("time_turns", SCRIPT)
time_turns = importlib.util.module_from_spec(spec)
spec.loader.exec_module(time_turns)


def test_kernel_list_takes_spla_names_and_rejects_others():
    assert time_turns.kernel_list("vector:8, adaptive,") == ["vector:8", "adaptive"]
    for bad in ("", "vector:3", "nope", "scalar,segmented:32"):
        with pytest.raises(argparse.ArgumentTypeError):
            time_turns.kernel_list(bad)


def test_wrong_and_failing_kernels_are_reported_not_timed(monkeypatch, tmp_path):
    """The script's flow on the CPU, its GPU parts faked: SciPy stands in for
    the kernels, one of them wrong and one raising."""
    pool = types.SimpleNamespace(free_all_blocks=lambda: None)
    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(
        asarray=np.asarray, empty=np.empty, get_default_memory_pool=lambda: pool))
    monkeypatch.setattr(spla.CSRMatrix, "to_device", lambda self: self)
    timed = []

    def fake_spmv(A, x, *, kernel, out):
        if kernel == "segmented":
            raise RuntimeError("no GPU here")
        out[:] = (2 if kernel == "vector:2" else 1) * (A.to_scipy() @ x)
        return out

    def fake_timing(fn, **_):
        timed.append(fn)
        return bench.Timing(1e-3, 1e-3, 1e-3, 1)

    monkeypatch.setattr(ops_spmv, "spmv", fake_spmv)
    monkeypatch.setattr(timing, "time_gpu_budgeted", fake_timing)
    monkeypatch.setattr(bench, "environment", lambda: {})
    assert time_turns.main(["gen:banded:300:3", "--kernels", "vector:2,vector:4,segmented", "--rounds", "3",
                            "--out", str(tmp_path)]) == 1
    results = {r["kernel"]: r for r in json.loads((tmp_path / "turns.json").read_text())["results"]}
    assert {k: r["status"] for k, r in results.items()} == {
        "cusparse": "ok", "vector:2": "wrong", "vector:4": "ok", "segmented": "failed"}
    assert len(timed) == 3 * 2  # only the two right ones, every round
    assert results["vector:4"]["ms"] == 1.0 and results["vector:4"]["speedup"] == 1.0


def test_the_summary_sets_auto_beside_the_lean_pair_and_the_best_timed_kernel():
    def run(source, dtype, ms):
        return [{"source": source, "dtype": dtype, "kernel": k, "status": "ok", "ms": v} for k, v in ms.items()]

    records = (run("/d/a.npz", "float32", {"cusparse": 1.0, "cusparse:2": 0.8, "auto": 0.4, "staged": 0.4})
               + run("/d/b.npz", "float32", {"cusparse": 1.0, "cusparse:2": 1.2, "auto": 1.0, "vector": 0.5})
               + [{"source": "/d/b.npz", "dtype": "float32", "kernel": "segmented", "status": "wrong"}]
               + run("/d/a.npz", "float64", {"cusparse": 1.0, "auto": 0.8}))
    assert time_turns.summarize(records) == [
        "float32: auto 1.414x the lean cuSPARSE pair (geomean of 2; worst 1.000x, b); the best timed spla kernel "
        "2.000x; auto within 15% of it on 1/2",
        "float64: auto 1.250x cuSPARSE (ALG1) (geomean of 1; worst 1.250x, a); the best timed spla kernel 1.250x; "
        "auto within 15% of it on 1/1"]
    assert time_turns.summarize(run("/d/a.npz", "float32", {"cusparse": 1.0, "vector": 0.5})) == []  # no auto


def test_auto_rows_say_what_auto_ran_and_what_blocked_was_predicted_to_gain():
    from spla.planning import blocked
    from spla.planning import spmv as planning

    narrow = spla.CSRMatrix.from_scipy(sp.random(300, 300, density=0.02, format="csr", random_state=1))
    assert time_turns.describe(narrow) == planning.choose_kernel(narrow)  # one column block: no gain to predict
    wide = spla.CSRMatrix.from_scipy(sp.random(4, 5_000_000, density=1e-5, format="csr", random_state=2))
    assert blocked.n_blocks(wide.n_cols) > 1
    assert time_turns.describe(wide) == (f"{planning.choose_kernel(wide)}, "
                                         f"blocked predicted {blocked.predicted_gain(wide):.2f}x staged")


@pytest.mark.gpu
def test_every_kernel_is_checked_then_timed_beside_cusparse(tmp_path):
    assert time_turns.main(["gen:banded:3000:5", "--kernels", "vector:2,vector:32,adaptive", "--dtype",
                            "float32", "float64", "--rounds", "2", "--budget", "0.01", "--out", str(tmp_path)]) == 0
    results = json.loads((tmp_path / "turns.json").read_text())["results"]
    assert [(r["dtype"], r["kernel"]) for r in results] == [
        (dtype, kernel) for dtype in ("float32", "float64")
        for kernel in ("cusparse", "vector:2", "vector:32", "adaptive")]
    for r in results:
        assert r["status"] == "ok" and r["error_vs_abs"] < 1e-5 and len(r["rounds_ms"]) == 2
        assert r["speedup"] == pytest.approx(r["cusparse_ms"] / r["ms"])


@pytest.mark.gpu
def test_the_auto_row_names_the_kernel_auto_ran(tmp_path):
    from spla.planning import spmv as planning

    assert time_turns.main(["gen:banded:3000:5", "--kernels", "auto", "--rounds", "1", "--budget", "0.01",
                            "--out", str(tmp_path)]) == 0
    auto = [r for r in json.loads((tmp_path / "turns.json").read_text())["results"] if r["kernel"] == "auto"]
    A = corpus.load("gen:banded:3000:5", dtype=np.float64).astype("float32").to_device()
    assert auto[0]["picked"] == planning.choose_kernel(A)
