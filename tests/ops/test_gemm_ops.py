"""spla.gemm / spla.gemv on the CPU (NumPy), out=, and the `spla gemm` command (CliRunner)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

import spla
from spla.cli import main


def test_gemm_matches_numpy_and_keeps_float32(rng):
    A = rng.standard_normal((17, 33)).astype(np.float32)
    B = rng.standard_normal((33, 65)).astype(np.float32)
    C = spla.gemm(A, B)
    assert C.dtype == np.float32 and C.shape == (17, 65)
    np.testing.assert_allclose(C, A.astype(np.float64) @ B, rtol=1e-5, atol=1e-5)


def test_gemm_alpha_beta_in_place(rng):
    A, B = rng.standard_normal((6, 4)), rng.standard_normal((4, 5))
    C0 = rng.standard_normal((6, 5))
    C = C0.copy()
    returned = spla.gemm(A, B, C, alpha=2.0, beta=-1.0)
    assert returned is C
    np.testing.assert_allclose(C, 2.0 * A @ B - C0, rtol=1e-12)


def test_gemm_beta_zero_overwrites_nan_and_k_zero(rng):
    C = np.full((3, 4), np.nan)
    spla.gemm(rng.standard_normal((3, 2)), rng.standard_normal((2, 4)), C)
    assert np.all(np.isfinite(C))
    C = np.full((3, 4), np.nan, dtype=np.float32)
    spla.gemm(np.zeros((3, 0), np.float32), np.zeros((0, 4), np.float32), C)
    np.testing.assert_array_equal(C, 0)
    C0 = rng.standard_normal((3, 4))
    C = C0.copy()
    spla.gemm(np.zeros((3, 0)), np.zeros((0, 4)), C, beta=3.0)
    np.testing.assert_allclose(C, 3.0 * C0)


def test_gemm_mixed_precision_promotes(rng):
    C = spla.gemm(np.ones((2, 3), np.float32), np.ones((3, 2), np.float64))
    assert C.dtype == np.float64
    np.testing.assert_array_equal(C, 3.0)


@pytest.mark.parametrize("A, B, C, kwargs", [
    (np.ones(3), np.ones((3, 3)), None, {}),                           # 1-D A
    (np.ones((2, 3)), np.ones((4, 2)), None, {}),                      # inner dimensions
    (np.ones((2, 3), np.int64), np.ones((3, 2), np.int64), None, {}),  # integer dtype
    (np.ones((2, 3)), np.ones((3, 2)), np.ones((3, 2)), {}),           # C shape
    (np.ones((2, 3)), np.ones((3, 2)), np.ones((2, 2), np.float32), {}),  # C dtype
    (np.ones((2, 3)), np.ones((3, 2)), None, {"beta": 1.0}),           # beta without C
], ids=["1d", "inner", "int", "c-shape", "c-dtype", "beta-no-c"])
def test_gemm_bad_input(A, B, C, kwargs):
    with pytest.raises(spla.InputError):
        spla.gemm(A, B, C, **kwargs)


def test_gpu_kernel_on_numpy_is_refused():
    with pytest.raises(spla.KernelError, match="GPU"):
        spla.gemm(np.ones((2, 2)), np.ones((2, 2)), kernel="dbuf")
    assert spla.gemm(np.ones((2, 2)), np.ones((2, 2)), kernel="numpy")[0, 0] == 2.0


def test_gemv_numpy(rng):
    M = rng.standard_normal((7, 5)).astype(np.float32)
    x = rng.standard_normal(5)
    y0 = rng.standard_normal(7).astype(np.float32)
    y = y0.copy()
    returned = spla.gemv(M, x, y, alpha=0.5, beta=2.0)
    assert returned is y and y.dtype == np.float32
    np.testing.assert_allclose(y, 0.5 * M.astype(np.float64) @ x + 2.0 * y0, rtol=1e-5)
    y = np.full(7, np.nan, dtype=np.float32)
    spla.gemv(M, x, y)
    assert np.all(np.isfinite(y))
    with pytest.raises(spla.InputError):
        spla.gemv(M, np.ones(4))
    with pytest.raises(spla.InputError):
        spla.gemv(M, np.ones(5), np.ones(7))  # float64 y for a float32 M


def run_cli(*args):
    return CliRunner().invoke(main, ["gemm", *args], catch_exceptions=False)


def test_cli_cpu_table():
    result = run_cli("--m", "8", "--n", "9", "--k", "10", "--device", "cpu", "--repeat", "2")
    assert result.exit_code == 0, result.output
    assert "NumPy only" in result.output
    assert "numpy" in result.output and "ok" in result.output


def test_cli_cpu_json():
    result = run_cli("--m", "12", "--n", "5", "--k", "7", "--device", "cpu", "--json", "--repeat", "2")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["device"] == "cpu" and (report["m"], report["n"], report["k"]) == (12, 5, 7)
    (row,) = report["rows"]
    assert row["kernel"] == "numpy" and row["correct"] and row["max_rel_err"] < 1e-5 and row["ms"] > 0


def test_cli_gpu_kernel_without_gpu_is_a_usage_error():
    result = run_cli("--device", "cpu", "--kernel", "dbuf")
    assert result.exit_code == 2
    assert "spla: error:" in result.output and "dbuf" in result.output


def test_cli_negative_size():
    result = run_cli("--device", "cpu", "--m", "-1")
    assert result.exit_code == 2 and "--m" in result.output


def test_cli_plot(tmp_path):
    out = tmp_path / "roofline.png"
    result = run_cli("--m", "16", "--n", "16", "--k", "16", "--device", "cpu", "--repeat", "2", "--plot", str(out))
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert result.exit_code == 1 and "matplotlib" in result.output
        assert not out.exists()
    else:
        assert result.exit_code == 0, result.output
        assert out.stat().st_size > 0


def test_cpu_roofline_has_its_roofs(tmp_path, monkeypatch):
    """On the CPU the roof is the measured host copy bandwidth and NumPy's BLAS rate."""
    pytest.importorskip("matplotlib")
    import matplotlib.axes

    from spla.bench import gemm as bench_gemm

    drawn = []
    real = matplotlib.axes.Axes.plot
    monkeypatch.setattr(matplotlib.axes.Axes, "plot",
                        lambda self, *a, **k: drawn.append(k.get("label")) or real(self, *a, **k))
    report = {"m": 64, "n": 64, "k": 64, "device": "cpu", "rows": [{"kernel": "numpy", "tflops": 0.05}]}
    bench_gemm.roofline_plot(report, str(tmp_path / "r.png"), 20.0)
    assert any(label and "0.02 TB/s copy, NumPy BLAS rate" in label for label in drawn)
