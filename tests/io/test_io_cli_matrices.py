"""`spla generate` and `spla fetch` through the click CLI."""

from __future__ import annotations

import json

import numpy as np
import scipy.io
from click.testing import CliRunner

from spla.cli import main
from spla.io import generators


def run(*args):
    return CliRunner().invoke(main, list(args))


def test_generate_kind_and_args_matches_from_spec(tmp_path):
    out = tmp_path / "r.mtx"
    result = run("generate", "random", "200", "5", "--seed", "3", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "nnz 1,000" in result.output
    written = scipy.io.mmread(out).tocsr()
    expected = generators.from_spec("gen:random:200:5:seed=3").to_scipy()
    assert abs(written - expected).max() == 0


def test_generate_full_spec_and_gz(tmp_path):
    out = tmp_path / "p.mtx.gz"
    assert run("generate", "gen:poisson2d:6", "--out", str(out)).exit_code == 0
    assert scipy.io.mmread(out).shape == (36, 36)


def test_generate_errors_are_one_line(tmp_path):
    result = run("generate", "nosuch", "--out", str(tmp_path / "x.mtx"))
    assert result.exit_code == 2
    assert "unknown generator kind 'nosuch'" in result.output
    result = run("generate", "gen:random:5:2", "7", "--out", str(tmp_path / "x.mtx"))
    assert result.exit_code == 2 and "not both" in result.output
    assert not list(tmp_path.iterdir())


def test_generate_help_lists_kinds():
    result = run("generate", "--help")
    assert result.exit_code == 0
    for name in generators.KINDS:
        assert f"gen:{name}" in result.output
    assert "seed=S" in result.output


def test_fetch_list_shows_presence(tmp_path):
    (tmp_path / "cant.mtx").write_text("")
    (tmp_path / "web-Google.tar.gz.part").write_bytes(b"12")
    result = run("fetch", "--list", "--dir", str(tmp_path))
    assert result.exit_code == 0, result.output
    lines = {line.split()[0]: line for line in result.output.splitlines()[2:-1]}
    assert lines["cant"].endswith("cant.mtx") and lines["web-Google"].endswith("partial")
    assert lines["pwtk"].endswith("-")
    data = json.loads(run("fetch", "--list", "--json", "--dir", str(tmp_path)).output)
    assert {m["name"]: m["present"] for m in data["matrices"]}["cant"] == "cant.mtx"


def test_fetch_errors(tmp_path):
    result = run("fetch", "--dir", str(tmp_path))
    assert result.exit_code == 2 and "name a matrix" in result.output
    result = run("fetch", "web-Gogle", "--dir", str(tmp_path))
    assert result.exit_code == 2 and "did you mean web-Google" in result.output


def test_dense2_is_a_full_generated_matrix():
    from spla.io import catalog

    entry = catalog.get("dense2")
    A = generators.from_spec(entry.generator)
    assert A.shape == (entry.rows, entry.cols) and A.nnz == entry.nnz == 2000 * 2000
    assert np.all(A.data > 0)
