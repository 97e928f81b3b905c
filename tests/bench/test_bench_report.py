"""The SpMV throughput report (spla.report) on the CPU, and on the GPU when there is one."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp

import spla
import spla.device
from spla import bench
from spla.bench import report as shared_report
from spla.bench import spmv as bench_spmv
from spla.errors import InputError, KernelError
from spla.ops import spmv as ops_spmv
from spla.planning import spmv as rules


@pytest.fixture
def matrix(rng):
    return spla.CSRMatrix.from_scipy(sp.random(300, 200, density=0.05, format="csr", random_state=rng))


@pytest.mark.parametrize("dtype, tolerance", [("float32", 1e-6), ("float64", 1e-14)])
def test_cpu_report_figures(matrix, dtype, tolerance):
    result = bench_spmv.spmv_report(matrix, device="cpu", dtype=dtype, repeat=3)
    # SciPy's own call (the anchor), then spla's CPU SpMV (the same bits)
    assert result["anchor"] == "scipy" and [r["kernel"] for r in result["rows"]] == ["scipy", "auto"]
    assert result["rows"][1]["ok"] and result["rows"][1]["error"] == result["rows"][0]["error"]
    row = result["rows"][0]
    assert row["ok"] and 0 <= row["error"] < tolerance
    assert row["min_ms"] <= row["ms"] <= row["max_ms"]
    value_bytes = np.dtype(dtype).itemsize
    assert result["bytes"] == bench.spmv_bytes(300, 200, matrix.nnz, value_bytes, 4)
    assert result["bytes"] == (value_bytes + 4) * matrix.nnz + 4 * 301 + value_bytes * (200 + 300)
    seconds = row["ms"] / 1e3
    assert row["gflops"] == pytest.approx(2 * matrix.nnz / seconds / 1e9)
    assert row["gbps"] == pytest.approx(result["bytes"] / seconds / 1e9)
    assert row["speedup_vs_anchor"] == 1.0


def test_x_is_fixed_and_not_zero(matrix, monkeypatch):
    seen = []
    real = ops_spmv.spmv

    def spy(A, x, *args, **kwargs):
        seen.append(np.array(x))
        return real(A, x, *args, **kwargs)

    monkeypatch.setattr(ops_spmv, "spmv", spy)
    bench_spmv.spmv_report(matrix, device="cpu", repeat=1)
    bench_spmv.spmv_report(matrix, device="cpu", repeat=1)
    assert np.count_nonzero(seen[0]) == seen[0].size and np.array_equal(seen[0], seen[-1])


def test_wrong_result_is_flagged(matrix, monkeypatch):
    real = ops_spmv.spmv
    monkeypatch.setattr(ops_spmv, "spmv", lambda A, x, **kw: real(A, x, **kw) * np.float32(1.001))
    anchor, row = bench_spmv.spmv_report(matrix, device="cpu", repeat=1)["rows"]
    assert anchor["ok"]
    assert not row["ok"] and 1e-5 < row["error"] <= 1e-3  # scaled by |A||x|: at most the relative error


def test_nan_in_matrix_propagates_and_json_stays_valid():
    A = spla.CSRMatrix(np.array([1.0, np.nan, 2.0]), np.array([0, 1, 0]), np.array([0, 2, 3]), (2, 2))
    result = bench_spmv.spmv_report(A, device="cpu", repeat=1)
    row = result["rows"][0]
    assert row["ok"] and row["error"] == 0.0  # NaN rows match the reference's NaN rows
    assert "1 NaN" in result["note"] and "note: A holds 1 NaN" in bench_spmv.format_report(result)
    parsed = json.loads(shared_report.to_json({"x": float("nan"), "r": result}))
    assert parsed["x"] is None


def test_a_kernel_that_loses_a_nan_is_wrong(monkeypatch):
    A = spla.CSRMatrix(np.array([1.0, np.nan, 2.0]), np.array([0, 1, 0]), np.array([0, 2, 3]), (2, 2))
    real = ops_spmv.spmv
    monkeypatch.setattr(ops_spmv, "spmv", lambda A, x, **kw: np.nan_to_num(real(A, x, **kw)))
    row = bench_spmv.spmv_report(A, device="cpu", repeat=1)["rows"][1]
    assert not row["ok"] and row["error"] == float("inf")


def test_kernel_names_and_device_choice(monkeypatch):
    assert shared_report.kernel_names("cpu", "auto") == ["scipy", "auto"] == shared_report.kernel_names("cpu", "all")
    assert shared_report.kernel_names("cpu", "scipy") == ["scipy"]
    with pytest.raises(KernelError, match="runs on the GPU"):
        shared_report.kernel_names("cpu", "adaptive")
    names = shared_report.kernel_names("gpu", "all")  # the registry is importable without a GPU
    assert names[0] == "cusparse" and names.count("cusparse") == 1
    assert set(names) == set(shared_report.gpu_kernels())
    assert shared_report.kernel_names("gpu", "scalar") == ["cusparse", "scalar"]
    with pytest.raises(KernelError):
        shared_report.kernel_names("gpu", "no-such-kernel")
    with pytest.raises(InputError):
        shared_report.resolve_device("tpu")
    monkeypatch.setenv("SPLA_DISABLE_GPU", "1")
    spla.device.gpu_available.cache_clear()
    try:
        assert shared_report.resolve_device("auto") == "cpu"
    finally:
        spla.device.gpu_available.cache_clear()


def test_format_report_table(matrix):
    text = bench_spmv.format_report(bench_spmv.spmv_report(matrix, device="cpu", repeat=2))
    header = text.splitlines()[1]
    for column in ("kernel", "ms", "GFLOP/s", "GB/s", "vs scipy", "error/|A||x|"):
        assert column in header
    *_, scipy_row, auto_row, runs = text.splitlines()
    assert scipy_row.startswith("scipy") and auto_row.startswith("auto") and auto_row.endswith("ok")
    assert runs.startswith("auto runs: SciPy's kernel (spla's C kernel runs from")  # a small matrix
    alone = bench_spmv.format_report(bench_spmv.spmv_report(matrix, device="cpu", kernel="scipy", repeat=2))
    assert alone.splitlines()[-1].startswith("scipy") and "auto runs" not in alone  # auto did not run


def test_bad_arguments(matrix):
    with pytest.raises(InputError):
        bench_spmv.spmv_report(matrix, device="cpu", dtype="float16")
    with pytest.raises(InputError):
        bench_spmv.spmv_report(matrix, device="cpu", repeat=0)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gpu_report_all_kernels(dtype):
    A = spla.load("gen:powerlaw:20000:8:2000")
    result = bench_spmv.spmv_report(A, device="gpu", kernel="all", dtype=dtype, repeat=5)
    assert result["anchor"] == "cusparse" and result["copy_bandwidth_gbps"] > 100
    assert {r["kernel"] for r in result["rows"]} == set(shared_report.gpu_kernels())
    for row in result["rows"]:
        if row["kernel"] in rules.OWN_MATRICES_ONLY:  # a power law has neither structure: the row says so
            assert rules.STRUCTURES[row["kernel"]].NEEDS in row["failed"], row
            continue
        assert "failed" not in row, row
        assert row["ok"], row
        assert 0 < row["fraction_of_copy"] < 1.5 and row["speedup_vs_anchor"] > 0
    print(bench_spmv.format_report(result))


def test_host_turns_times_each_call_in_rounds():
    calls = {"a": 0, "b": 0}

    def count(name):
        calls[name] += 1

    medians = bench.host_turns({"a": lambda: count("a"), "b": lambda: count("b")}, rounds=3, budget_s=1e-4)
    assert set(medians) == {"a", "b"} and all(0 < seconds < 1e-3 for seconds in medians.values())
    assert calls["a"] >= 4 and calls["b"] >= 4  # one untimed call, then at least one a round
