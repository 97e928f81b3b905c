"""`spla spmv` and `spla info` through click's CliRunner."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from click.testing import CliRunner

from spla.cli import main

BANNER = "%%MatrixMarket matrix coordinate real general\n"


@pytest.fixture
def runner(monkeypatch, tmp_path):
    monkeypatch.setenv("SPLA_DISABLE_GPU", "1")  # --device auto must mean the CPU here
    monkeypatch.setenv("SPLA_CACHE_DIR", str(tmp_path / "user-cache"))
    from spla import device

    device.gpu_available.cache_clear()
    try:
        cli_runner = CliRunner(mix_stderr=False)  # click < 8.2 mixes stderr into stdout by default
    except TypeError:
        cli_runner = CliRunner()
    yield cli_runner
    device.gpu_available.cache_clear()


@pytest.fixture
def small_mtx(tmp_path, rng):
    path = tmp_path / "small.mtx"
    scipy.io.mmwrite(path, sp.random(50, 40, density=0.1, format="coo", random_state=rng))
    return path


def run(runner, *args):
    result = runner.invoke(main, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def test_spmv_text_report(runner):
    code, out, err = run(runner, "spmv", "gen:poisson2d:32", "--repeat", "3")
    assert code == 0, err
    assert "device      cpu (auto: no GPU visible)" in out
    for word in ("gini", "thread-per-row", "warp-per-row", "GFLOP/s", "GB/s", "error/|A||x|", "scipy"):
        assert word in out
    scipy_row = [line for line in out.splitlines() if line.startswith("scipy ")][0]
    assert scipy_row.split()[-1] == "ok"
    assert float(scipy_row.split()[-2]) < 1e-6


@pytest.mark.parametrize("dtype, tolerance", [("float32", 1e-6), ("float64", 1e-13)])
def test_spmv_json(runner, small_mtx, dtype, tolerance):
    code, out, err = run(runner, "spmv", small_mtx, "--json", "--dtype", dtype, "--repeat", "2",
                         "--device", "cpu")
    assert code == 0, err
    data = json.loads(out)
    assert data["analysis"]["rows"] == 50 and data["analysis"]["cols"] == 40
    row = data["spmv"]["rows"][0]
    assert row["kernel"] == "scipy" and data["spmv"]["dtype"] == dtype
    assert 0 <= row["error"] < tolerance and row["ms"] > 0 and row["gflops"] > 0 and row["gbps"] > 0
    assert data["load"]["format"] == "matrix market coordinate"


def test_info_text_and_json(runner, small_mtx):
    code, out, _ = run(runner, "info", small_mtx)
    assert code == 0 and "row length" in out and "imbalance" in out and "GFLOP" not in out
    code, out, _ = run(runner, "info", "gen:poisson2d:32", "--json")
    data = json.loads(out)
    assert code == 0 and data["analysis"]["rows"] == 1024 and data["analysis"]["row_length"]["max"] == 5


def test_info_reports_duplicates_and_nan(runner, tmp_path):
    path = tmp_path / "d.mtx"
    path.write_text(BANNER + "2 2 3\n1 1 1\n1 1 2\n2 2 nan\n")
    code, out, _ = run(runner, "info", path)
    assert code == 0 and "1 duplicate entries summed" in out and "NaN 1" in out


def test_info_says_snap_duplicates_are_merged_and_a_bom_was_skipped(runner, tmp_path):
    edges = tmp_path / "g.txt"
    edges.write_text("# edges\n0 1\n0 1\n1 2\n")
    code, out, _ = run(runner, "info", edges)
    assert code == 0 and "1 duplicate edges merged" in out
    marked = tmp_path / "b.mtx"
    marked.write_bytes(b"\xef\xbb\xbf" + (BANNER + "2 2 1\n1 1 1.0\n").encode())
    code, out, _ = run(runner, "info", marked)
    assert code == 0 and "byte-order mark skipped" in out


def test_missing_web_google_says_how_to_get_it(runner, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(runner, "spmv", "matrices/web-Google.mtx")
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("spla: error: matrices/web-Google.mtx")
    assert "spla fetch web-Google" in lines[0] and "spla spmv gen:weblike" in lines[0]
    code, _, err = run(runner, "info", "web-Google")
    assert code == 2 and "spla fetch web-Google" in err


@pytest.mark.parametrize("case", ["missing", "folder", "unknown suffix", "bad generator", "gpu kernel on cpu",
                                  "malformed", "unreadable", "repeat 0", "bad dtype"])
def test_bad_input_is_one_line_without_traceback(runner, tmp_path, monkeypatch, case):
    args, want_code, words = {
        "missing": (["spmv", tmp_path / "nope.mtx"], 2, "no such file"),
        "folder": (["info", tmp_path], 2, "is a folder"),
        "unknown suffix": (["info", tmp_path / "m.csv"], 2, "unknown file type"),
        "bad generator": (["spmv", "gen:nonsense"], 2, "nonsense"),
        "gpu kernel on cpu": (["spmv", "gen:poisson2d:8", "--kernel", "warp"], 2, "runs on the GPU"),
        "malformed": (["spmv", tmp_path / "bad.mtx"], 1, "bad.mtx:3: row index 9 is out of range"),
        "unreadable": (["info", tmp_path / "locked.mtx"], 2, "permission denied"),
        "repeat 0": (["spmv", "gen:poisson2d:8", "--repeat", "0"], 2, "repeat"),
        "bad dtype": (["spmv", "gen:poisson2d:8", "--dtype", "float16"], 2, "float16"),
    }[case]
    (tmp_path / "m.csv").write_text("1,2\n")
    (tmp_path / "bad.mtx").write_text(BANNER + "3 3 1\n9 1 1\n")
    locked = tmp_path / "locked.mtx"
    locked.write_text(BANNER + "1 1 1\n1 1 1\n")
    real_access = os.access
    # chmod 0 does not stop root, so the permission check itself is made to say no
    monkeypatch.setattr(os, "access", lambda p, mode: False if str(p) == str(locked) else real_access(p, mode))
    code, out, err = run(runner, *args)
    assert code == want_code, (out, err)
    assert "Traceback" not in err and "Traceback" not in out
    assert words in err
    if case not in ("repeat 0", "bad dtype"):  # click's own usage errors print a usage block
        assert len(err.strip().splitlines()) == 1 and err.startswith("spla: error: ")
    assert not list(tmp_path.glob("*.spla.npz")) and not list(tmp_path.glob(".*.tmp"))


def test_help_texts(runner):
    for command in ("spmv", "info"):
        code, out, _ = run(runner, command, "--help")
        assert code == 0 and "SOURCE" in out and "gen:weblike" in out
    code, out, _ = run(runner, "spmv", "--help")
    assert "--device" in out and "cusparse" in out and "--repeat" in out


def test_gpu_request_without_gpu_is_an_error(runner):
    code, _, err = run(runner, "spmv", "gen:poisson2d:8", "--device", "gpu")
    assert code == 1 and err.startswith("spla: error:") and "--device cpu" in err


def test_second_run_uses_cache(runner, small_mtx):
    run(runner, "info", small_mtx)
    assert (small_mtx.parent / "small.mtx.spla.npz").is_file()
    code, out, _ = run(runner, "info", small_mtx)
    assert code == 0 and "from cache" in out
    code, out, _ = run(runner, "info", small_mtx, "--no-cache")
    assert code == 0 and "parsed" in out


def test_python_dash_m_spla_works():
    import subprocess
    import sys

    env = dict(os.environ, SPLA_DISABLE_GPU="1")
    done = subprocess.run([sys.executable, "-m", "spla", "info", "gen:poisson2d:4", "--json"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["analysis"]["nnz"] == int(np.sum([5] * 4 + [4] * 8 + [3] * 4))
