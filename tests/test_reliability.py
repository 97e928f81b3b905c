"""Reliability on the CPU: int64 index width, GPU memory errors, NaN/Inf and empty
matrices, launch-configuration checks, one-line CLI errors, atomic writes.

GPU counterparts are in tests/test_reliability_gpu.py.
"""

from __future__ import annotations

import gzip
import io as pyio
import os
import tarfile

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner

import spla
from spla import DeviceMemoryError, InputError, KernelError, MatrixFormatError, analysis, device, linalg
from spla import io as spla_io
from spla.backends.cuda import runtime
from spla.cli import main
from spla.csr import INT32_MAX, CSRMatrix, index_dtype_for
from spla.io import cache, mmio
from spla.planning.stats import host_row_lengths

WIDE = 2**31 + 5  # a dimension no int32 can index


# ===================================================================== int64 end to end
def sparse_vector(tmp_path, n, values: dict, dtype=np.float64):
    """A length-n vector backed by a sparse file: only the pages holding ``values`` use memory."""
    x = np.memmap(tmp_path / "x.bin", dtype=dtype, mode="w+", shape=(n,))
    for index, value in values.items():
        x[index] = value
    return x


def test_wide_matrix_uses_int64_through_loader_analysis_and_cpu_spmv(tmp_path):
    path = tmp_path / "wide.mtx"
    path.write_text(f"%%MatrixMarket matrix coordinate real general\n3 {WIDE} 4\n"
                    f"1 1 2.0\n1 {WIDE} 3.0\n3 {2**31} -1.5\n3 {2**31 + 1} 4.0\n")
    A, _ = mmio.read_mtx(path)
    assert A.shape == (3, WIDE) and A.index_dtype == np.int64
    assert A.indices.max() == WIDE - 1  # no wrap-around to a negative int32
    result = analysis.analyze(A)
    assert result["cols"] == WIDE and result["nnz"] == 4
    assert result["row_length"]["max"] == 2 and result["row_length"]["empty_rows"] == 1
    x = sparse_vector(tmp_path, WIDE, {0: 10.0, WIDE - 1: 1.0, 2**31 - 1: 2.0, 2**31: 5.0})
    y = spla.spmv(A, x)
    np.testing.assert_array_equal(y, [2.0 * 10 + 3.0 * 1, 0.0, -1.5 * 2 + 4.0 * 5])


def test_index_width_rule():
    assert index_dtype_for(INT32_MAX, (10, 10)) == np.int32
    assert index_dtype_for(INT32_MAX + 1, (10, 10)) == np.int64
    assert index_dtype_for(5, (3, WIDE)) == np.int64
    assert index_dtype_for(5, (WIDE, 3)) == np.int64
    with pytest.raises(InputError, match="int64"):
        CSRMatrix(np.ones(1), np.array([WIDE - 1]), np.array([0, 1, 1, 1]), (3, WIDE), index_dtype=np.int32)


def test_indptr_claiming_more_than_int32_entries_is_refused_cheaply():
    # row pointer says 2**31 + 10 entries, the arrays hold 3: refused before anything is sized from it
    indptr = np.array([0, 1, 2**31 + 10], dtype=np.int64)
    with pytest.raises(InputError, match="indptr"):
        CSRMatrix(np.ones(3), np.array([0, 1, 2]), indptr, (2, 4))


def test_analysis_sums_row_lengths_in_int64():
    # three rows of 2**31 - 1 entries: every total is past int32, none may wrap
    lengths = np.full(3, INT32_MAX, dtype=np.int64)
    nnz = int(lengths.sum())
    thread = analysis.thread_per_row(lengths, nnz)
    assert thread["max_work"] == INT32_MAX and thread["mean_work"] == INT32_MAX
    warp = analysis.warp_per_row(lengths, nnz)
    assert warp["max_work"] == 3 * -(-INT32_MAX // 32)
    values, counts = analysis.row_length_histogram(lengths)
    assert values.tolist() == [INT32_MAX] and counts.tolist() == [3]
    assert analysis._top_share(values, counts, 3, nnz) == pytest.approx(1 / 3)
    assert analysis._gini(values, counts, 3, nnz) == pytest.approx(0.0, abs=1e-12)


def test_row_lengths_of_an_int32_matrix_come_out_int64():
    A = CSRMatrix.from_scipy(sp.random(50, 40, density=0.2, format="csr", random_state=1))
    assert A.index_dtype == np.int32
    assert A.row_lengths().dtype == np.int64 and host_row_lengths(A).dtype == np.int64


# ===================================================================== GPU memory, without a GPU
class _FakeCupy:
    """Just enough of a cupy module for to_device to reach its memory check."""

    class ndarray:  # noqa: N801 - nothing is ever one of these
        pass

    class cuda:  # noqa: N801 - mirrors cupy.cuda
        class memory:  # noqa: N801
            class OutOfMemoryError(MemoryError):
                pass

    @staticmethod
    def asarray(a):
        raise _FakeCupy.cuda.memory.OutOfMemoryError(int(a.nbytes) + (1 << 40), 0)


@pytest.fixture
def tiny_gpu(monkeypatch):
    """A pretend GPU with 1 MiB free (no CUDA needed)."""
    for module in (device,):
        monkeypatch.setattr(module, "require_cupy", lambda: _FakeCupy)
        monkeypatch.setattr(module, "_import_cupy", lambda: _FakeCupy)
        monkeypatch.setattr(module, "free_device_memory", lambda: 1 << 20)
    return _FakeCupy


def test_to_device_refuses_a_matrix_larger_than_free_memory(tiny_gpu):
    A = spla.load("gen:random:20000:16")
    with pytest.raises(DeviceMemoryError) as caught:
        A.to_device()
    message = str(caught.value)
    assert f"{A.nbytes / 2**30:.2f} GiB" in message and "0.00 GiB is free" in message
    assert "--device cpu" in message
    assert caught.value.needed == A.nbytes and caught.value.free == 1 << 20


def test_out_of_memory_during_the_copy_becomes_device_memory_error(tiny_gpu, monkeypatch):
    for module in (device,):  # the check passes, the copy fails
        monkeypatch.setattr(module, "free_device_memory", lambda: 1 << 50)
    A = spla.load("gen:random:100:4")
    with pytest.raises(DeviceMemoryError, match="--device cpu"):
        A.to_device()


def test_cli_prints_device_memory_errors_as_one_line(tiny_gpu, monkeypatch):
    from spla.bench import report

    monkeypatch.setattr(report, "device_name", lambda device: "pretend GPU")
    result = CliRunner().invoke(main, ["spmv", "gen:random:20000:16", "--device", "gpu", "--kernel", "scalar"])
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "GiB" in lines[0] and "--device cpu" in lines[0], result.stderr


def test_cli_turns_a_cuda_out_of_memory_traceback_into_one_line(tiny_gpu, monkeypatch):
    def boom(*args, **kwargs):
        raise _FakeCupy.cuda.memory.OutOfMemoryError(3 << 30, 0)

    monkeypatch.setattr(spla_io, "load", boom)
    result = CliRunner().invoke(main, ["info", "gen:random:10:2"])
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "3.00 GiB" in lines[0] and "--device cpu" in lines[0], result.stderr


# ===================================================================== NaN / Inf / empty
def _special_values(rng, n):
    values = rng.standard_normal(n)
    values[rng.choice(n, size=max(1, n // 6), replace=False)] = rng.choice([np.nan, np.inf, -np.inf], n // 6 or 1)
    return values


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nan_and_inf_propagate_like_scipy(rng, dtype):
    S = sp.random(60, 45, density=0.15, format="csr", random_state=np.random.RandomState(rng.integers(2**31)))
    S.data = _special_values(rng, S.nnz)
    A = CSRMatrix.from_scipy(S, dtype=dtype)
    x = _special_values(rng, 45).astype(dtype)
    reference = S.astype(dtype) @ x
    np.testing.assert_array_equal(spla.spmv(A, x), reference)
    X = np.stack([x, x[::-1].copy(), np.ones(45, dtype)], axis=1)
    np.testing.assert_array_equal(spla.spmm(A, X), S.astype(dtype) @ X)


@pytest.mark.parametrize("shape", [(0, 0), (0, 5), (5, 0), (7, 7)])
def test_empty_matrices_give_zeros_and_never_read_y_when_beta_is_zero(shape):
    A = CSRMatrix(np.zeros(0), np.zeros(0, np.int32), np.zeros(shape[0] + 1, np.int32), shape)
    x = np.ones(shape[1])
    poisoned = np.full(shape[0], np.nan)
    y = spla.spmv(A, x, poisoned, beta=0.0)
    assert y.shape == (shape[0],) and not np.isnan(y).any() and not y.any()
    Y = spla.spmm(A, np.ones((shape[1], 3)), np.full((shape[0], 3), np.nan), beta=0.0)
    assert Y.shape == (shape[0], 3) and not np.isnan(Y).any() and not Y.any()


def test_empty_rows_are_zero():
    S = sp.csr_matrix(np.array([[0, 0, 0], [1.0, 0, 2.0], [0, 0, 0]]))
    y = spla.spmv(CSRMatrix.from_scipy(S), np.array([1.0, 5.0, 3.0]))
    np.testing.assert_array_equal(y, [0.0, 7.0, 0.0])


def _poisson(n=12):
    T = sp.diags([2.0] * n) - sp.diags([1.0] * (n - 1), 1) - sp.diags([1.0] * (n - 1), -1)
    return T.tocsr()


SOLVERS = ["cg", "bicgstab", "gmres", "minres"]
BAD_SYSTEMS = {
    "nan in b": lambda: (_poisson(), np.where(np.arange(12) == 3, np.nan, 1.0)),
    "inf in b": lambda: (_poisson(), np.where(np.arange(12) == 0, np.inf, 1.0)),
    "nan in A": lambda: (_poisson() + sp.csr_matrix(([np.nan], ([4], [4])), shape=(12, 12)), np.ones(12)),
    "zero matrix": lambda: (sp.csr_matrix((12, 12)), np.ones(12)),
    "singular": lambda: (sp.diags([1.0] * 6 + [0.0] + [1.0] * 5).tocsr(), np.ones(12)),
}


@pytest.mark.parametrize("case", list(BAD_SYSTEMS))
@pytest.mark.parametrize("method", SOLVERS)
def test_solvers_report_failure_instead_of_false_convergence(method, case):
    A, b = BAD_SYSTEMS[case]()
    calls = []
    x, info = getattr(linalg, method)(CSRMatrix.from_scipy(A), b, maxiter=10_000,
                                      callback=lambda *_: calls.append(1))
    assert info != 0, f"{method} claims to have solved a {case} system"
    if case.startswith(("nan", "inf")):
        assert info < 0, f"{method} should report the non-finite values as a breakdown, got {info}"
        assert len(calls) <= 20, f"{method} ran {len(calls)} iterations on NaN/Inf instead of stopping"


def test_block_cg_never_calls_a_nan_column_converged():
    A = CSRMatrix.from_scipy(_poisson())
    B = np.ones((12, 2))
    B[3, 0] = np.nan
    X, info = linalg.block_cg(A, B)
    assert info[0] == -1 and info[1] == 0
    np.testing.assert_allclose(_poisson() @ X[:, 1], B[:, 1], rtol=1e-4)


# ===================================================================== launch configuration
def test_grid_helper_rejects_impossible_launches():
    assert runtime.grid_1d(0, 256) == 1
    assert runtime.grid_1d(67_200_000, 1024) == 65_625  # over 65,535 blocks: fine in x
    assert runtime.grid_1d(runtime.MAX_GRID_X * 256, 256) == runtime.MAX_GRID_X
    with pytest.raises(KernelError, match="grid limit"):
        runtime.grid_1d(runtime.MAX_GRID_X * 256 + 1, 256)
    for block in (0, -32, 1025):
        with pytest.raises(KernelError, match="block"):
            runtime.grid_1d(100, block)
    with pytest.raises(KernelError, match="negative"):
        runtime.grid_1d(-1, 256)


def test_spmv_backend_caps_grids_it_loops_over():
    from spla.backends.cuda import spmv as cuda_spmv

    assert cuda_spmv._grid(10**13, 256) == runtime.MAX_GRID_X  # grid-stride kernels: capped, not refused
    assert cuda_spmv._grid(0, 256) == 1


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


# ===================================================================== atomic writes
def _leftovers(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".") and p.name.endswith(".tmp"))


class Interrupted(Exception):
    pass


def test_cache_write_killed_half_way_leaves_nothing_and_next_load_caches(tmp_path, monkeypatch):
    source = tmp_path / "m.mtx"
    mmio.write_mtx(source, sp.random(30, 30, density=0.2, random_state=3))
    real_savez = np.savez

    def half(stream, **arrays):
        stream.write(b"PK\x03\x04 half an archive")
        raise Interrupted

    monkeypatch.setattr(np, "savez", half)
    with pytest.raises(Interrupted):
        spla_io.load(source)
    assert not (tmp_path / ("m.mtx" + cache.SUFFIX)).exists() and _leftovers(tmp_path) == []
    monkeypatch.setattr(np, "savez", real_savez)
    A = spla_io.load(source)
    assert spla_io.load_info(A)["cache"] == str(tmp_path / ("m.mtx" + cache.SUFFIX))
    assert spla_io.load_info(spla_io.load(source))["cache_hit"]


@pytest.mark.parametrize("name", ["g.mtx", "g.mtx.gz"])
def test_generate_killed_half_way_leaves_nothing_and_next_run_works(tmp_path, monkeypatch, name):
    out = tmp_path / name
    real = mmio._write_coordinate

    def half(stream, coo, comment):
        stream.write(b"%%MatrixMarket matrix coordinate real general\n10 10 5\n1 1 ")
        raise Interrupted

    monkeypatch.setattr(mmio, "_write_coordinate", half)
    result = CliRunner().invoke(main, ["generate", "random", "10", "3", "--out", str(out)])
    assert isinstance(result.exception, Interrupted)
    assert not out.exists() and _leftovers(tmp_path) == []
    monkeypatch.setattr(mmio, "_write_coordinate", real)
    result = CliRunner().invoke(main, ["generate", "random", "10", "3", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert spla_io.load(out, cache=False).nnz == 30


def test_fetch_unpack_killed_half_way_leaves_nothing_and_next_run_works(tmp_path, monkeypatch):
    from spla.io import fetch

    body = b"%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n2 2 2\n"
    archive = tmp_path / "tiny.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        member = tarfile.TarInfo("tiny/tiny.mtx")
        member.size = len(body)
        tar.addfile(member, pyio.BytesIO(body))
    dest = tmp_path / "tiny.mtx"
    real = fetch._copy_counting_lines

    def half(stream, out, head, progress, total):
        out.write(head + b"1 1 ")
        raise Interrupted

    monkeypatch.setattr(fetch, "_copy_counting_lines", half)
    with pytest.raises(Interrupted):
        fetch.extract(archive, "tiny", dest, progress=False)
    assert not dest.exists() and _leftovers(tmp_path) == []
    monkeypatch.setattr(fetch, "_copy_counting_lines", real)
    assert fetch.extract(archive, "tiny", dest, progress=False) == dest
    assert dest.read_bytes() == body


def test_damaged_cache_entry_is_ignored_and_rebuilt(tmp_path):
    source = tmp_path / "m.mtx.gz"
    mmio.write_mtx(source, sp.random(20, 20, density=0.3, random_state=4))
    first = spla_io.load(source)
    entry = tmp_path / ("m.mtx.gz" + cache.SUFFIX)
    entry.write_bytes(entry.read_bytes()[:100])  # a torn file from some other writer
    again = spla_io.load(source)
    assert not spla_io.load_info(again)["cache_hit"]
    np.testing.assert_array_equal(again.to_scipy().toarray(), first.to_scipy().toarray())
    assert spla_io.load_info(spla_io.load(source))["cache_hit"]


def test_truncated_gz_source_is_a_format_error_not_a_traceback(tmp_path):
    path = tmp_path / "t.mtx.gz"
    path.write_bytes(gzip.compress(b"%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n2 2 2\n")[:-9])
    with pytest.raises(MatrixFormatError, match=str(path)):
        spla_io.load(path, cache=False)
