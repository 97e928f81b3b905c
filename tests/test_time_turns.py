"""scripts/time_turns.py: kernel-list checks (CPU) and one run in turns beside cuSPARSE (GPU)."""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "time_turns.py"
spec = importlib.util.spec_from_file_location("time_turns", SCRIPT)
time_turns = importlib.util.module_from_spec(spec)
spec.loader.exec_module(time_turns)


def test_kernel_list_takes_spla_names_and_rejects_others():
    assert time_turns.kernel_list("vector:8, adaptive,") == ["vector:8", "adaptive"]
    for bad in ("", "vector:3", "nope", "scalar,segmented:32"):
        with pytest.raises(argparse.ArgumentTypeError):
            time_turns.kernel_list(bad)


@pytest.mark.gpu
def test_every_kernel_is_checked_then_timed_beside_cusparse(tmp_path):
    assert time_turns.main(["gen:banded:3000:5", "--kernels", "vector:2,vector:32,adaptive", "--dtype",
                            "float32", "float64", "--rounds", "2", "--budget", "0.01", "--out", str(tmp_path)]) == 0
    results = json.loads((tmp_path / "turns.json").read_text())["results"]
    assert [(r["dtype"], r["kernel"]) for r in results] == [
        (dtype, kernel) for dtype in ("float32", "float64") for kernel in ("cusparse", "vector:2", "vector:32", "adaptive")]
    for r in results:
        assert r["status"] == "ok" and r["error_vs_abs"] < 1e-5 and len(r["rounds_ms"]) == 2
        assert r["speedup"] == pytest.approx(r["cusparse_ms"] / r["ms"])
