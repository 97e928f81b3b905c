"""The AMG set-up profiler's trace arithmetic, on a hand-made trace (the profile itself needs a GPU and PyTorch)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[2] / "scripts" / "profile_amg_setup.py"
_spec = importlib.util.spec_from_file_location("profile_amg_setup", _PATH)
profile = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(profile)


def test_busy_time_is_the_union_of_intervals():
    assert profile.busy_time([]) == 0
    assert profile.busy_time([(0, 10), (5, 12), (20, 25), (21, 22)]) == 17


def test_gpu_work_is_charged_to_the_range_its_launch_sits_in():
    events = [
        {"cat": "user_annotation", "name": "L0 strength", "ts": 0, "dur": 100},
        {"cat": "user_annotation", "name": "L1 galerkin", "ts": 200, "dur": 100},
        {"cat": "cuda_driver", "name": "cuLaunchKernel", "ts": 10, "args": {"correlation": 1}},
        {"cat": "cuda_runtime", "name": "cudaMemcpyAsync", "ts": 50, "args": {"correlation": 2}},
        {"cat": "cuda_driver", "name": "cuLaunchKernel", "ts": 250, "args": {"correlation": 3}},
        {"cat": "cuda_runtime", "name": "cudaMemsetAsync", "ts": 260, "args": {"correlation": 4}},
        {"cat": "cuda_driver", "name": "cuLaunchKernel", "ts": 150, "args": {"correlation": 5}},  # between steps
        {"cat": "kernel", "name": "k", "ts": 20, "dur": 30, "args": {"correlation": 1}},
        {"cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pinned)", "ts": 60, "dur": 5, "args": {"correlation": 2}},
        {"cat": "kernel", "name": "k", "ts": 270, "dur": 2000, "args": {"correlation": 3}},
        {"cat": "gpu_memset", "name": "Memset", "ts": 280, "dur": 1, "args": {"correlation": 4}},
        {"cat": "kernel", "name": "k", "ts": 160, "dur": 7, "args": {"correlation": 5}},
    ]
    table = profile.by_range(events)
    assert table["L0 strength"] == {"host_ms": 0.1, "kernels": 1, "device_ms": pytest.approx(0.03), "to_host": 1,
                                    "memsets": 0}
    assert table["L1 galerkin"] == {"host_ms": 0.1, "kernels": 1, "device_ms": 2.0, "to_host": 0, "memsets": 1}
