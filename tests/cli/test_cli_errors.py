"""Bad arguments: one line on stderr and exit 2, for every command."""


from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from spla.cli import main

WIDE = 2**31 + 5  # a dimension no int32 can index


# ===================================================================== CLI: one line, exit 2
@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli")
    good = root / "good.mtx"
    good.write_text("%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 4\n2 2 4\n3 3 4\n")
    (root / "folder.mtx").mkdir()
    locked = root / "locked.mtx"
    locked.write_text(good.read_text())
    locked.chmod(0)
    return {"good": str(good), "folder": str(root / "folder.mtx"), "missing": str(root / "missing.mtx"),
            "locked": str(locked), "root": root}


def _source_cases(command, extra=()):
    return [(f"{command} {what}", [command, key, *extra]) for what, key in
            (("missing file", "missing"), ("directory", "folder"), ("unreadable file", "locked"),
             ("bad gen spec", "gen:random:-5:2"), ("unknown gen kind", "gen:nope"))]


CLI_CASES = (
    _source_cases("spmv", ["--device", "cpu"]) + _source_cases("info") + _source_cases("spmm", ["--device", "cpu"])
    + _source_cases("solve", ["--device", "cpu"]) + _source_cases("pagerank", ["--device", "cpu"]) + [
        ("spmv unknown kernel", ["spmv", "good", "--device", "cpu", "--kernel", "bogus"]),
        ("spmv --repeat 0", ["spmv", "good", "--device", "cpu", "--repeat", "0"]),
        ("spmv bad --dtype", ["spmv", "good", "--dtype", "int8"]),
        ("spmm k=0", ["spmm", "good", "--device", "cpu", "--k", "0"]),
        ("spmm negative k", ["spmm", "good", "--device", "cpu", "--k", "-4"]),
        ("spmm unknown kernel", ["spmm", "good", "--device", "cpu", "--kernel", "bogus"]),
        ("spmm --repeat 0", ["spmm", "good", "--device", "cpu", "--repeat", "0"]),
        ("gemm k=0", ["gemm", "--k", "0", "--device", "cpu"]),
        ("gemm negative m", ["gemm", "--m", "-3", "--device", "cpu"]),
        ("gemm unknown kernel", ["gemm", "--kernel", "bogus", "--device", "cpu"]),
        ("gemm --repeat 0", ["gemm", "--repeat", "0", "--device", "cpu"]),
        ("solve --maxiter -1", ["solve", "gen:poisson2d:4", "--device", "cpu", "--maxiter", "-1"]),
        ("solve --restart 0", ["solve", "gen:poisson2d:4", "--device", "cpu", "--method", "gmres", "--restart", "0"]),
        ("solve negative rtol", ["solve", "gen:poisson2d:4", "--device", "cpu", "--rtol", "-1"]),
        ("solve missing rhs", ["solve", "gen:poisson2d:4", "--device", "cpu", "--rhs", "missing"]),
        ("solve unknown method", ["solve", "gen:poisson2d:4", "--method", "lu"]),
        ("pagerank --max-iter 0", ["pagerank", "gen:random:50:3", "--device", "cpu", "--max-iter", "0"]),
        ("pagerank negative tol", ["pagerank", "gen:random:50:3", "--device", "cpu", "--tol", "-1"]),
        ("pagerank alpha > 1", ["pagerank", "gen:random:50:3", "--device", "cpu", "--alpha", "2"]),
        ("pagerank negative top", ["pagerank", "gen:random:50:3", "--device", "cpu", "--top", "-1"]),
        ("fetch unknown name", ["fetch", "no-such-matrix", "--dir", "root"]),
        ("fetch nothing", ["fetch", "--dir", "root"]),
        ("fetch --dir is a file", ["fetch", "web-Google", "--dir", "good"]),
        ("fetch --timeout 0", ["fetch", "web-Google", "--timeout", "0", "--dir", "root"]),
        ("generate unknown kind", ["generate", "nope", "3", "--out", "root/g.mtx"]),
        ("generate negative size", ["generate", "gen:random:-5:2", "--out", "root/g.mtx"]),
        ("generate missing args", ["generate", "random", "--out", "root/g.mtx"]),
        ("generate bad spec", ["generate", "gen:random:5:x", "--out", "root/g.mtx"]),
        ("generate into a missing folder", ["generate", "random", "5", "2", "--out", "root/no/g.mtx"]),
        ("generate --out is a folder", ["generate", "random", "5", "2", "--out", "folder"]),
        ("generate negative seed", ["generate", "random", "5", "2", "--out", "root/g.mtx", "--seed", "-1"]),
        ("unknown command", ["frobnicate"]),
    ])


@pytest.mark.parametrize("args", [args for _, args in CLI_CASES], ids=[name for name, _ in CLI_CASES])
def test_bad_arguments_give_one_line_and_exit_2(files, args):
    if "locked" in args and os.geteuid() == 0:
        pytest.skip("running as root: chmod 000 does not stop root from reading the file")
    resolved = []
    for arg in args:
        if arg in files:
            arg = files[arg]
        elif arg.startswith("root/"):
            arg = str(files["root"] / arg[len("root/"):])
        resolved.append(arg)
    result = CliRunner().invoke(main, resolved)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.exit_code == 2, (result.exit_code, result.stderr, result.exception)
    assert len(lines) == 1 and lines[0].startswith("spla: error: "), result.stderr


