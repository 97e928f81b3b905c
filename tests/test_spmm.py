"""SpMM on the CPU: spla.spmm / A @ X against SciPy, layouts, errors, the
adaptive schedule's host-side partitioning and launch shapes, and `spla spmm`."""

from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner

import spla
from spla import plan as planner
from spla.backend import spmm_cuda
from spla.cli import main
from spla.errors import InputError, KernelError
from spla.io import generators

KS = (1, 2, 3, 4, 7, 8, 16, 33, 128)
TOL = {np.float32: 1e-5, np.float64: 1e-12}


def random_csr(rng, n_rows, n_cols, density=0.05, dtype=np.float64):
    A = sp.random(n_rows, n_cols, density=density, format="csr", random_state=rng, dtype=np.float64)
    return A.astype(dtype)


def check(Y, A, X, alpha=1.0, beta=0.0, Y0=None, dtype=np.float64):
    """Y against float64 SciPy, scaled by |A| @ |X| so cancellation does not fail float32."""
    A64, X64 = A.astype(np.float64), np.asarray(X, dtype=np.float64)
    ref = alpha * (A64 @ X64)
    scale = abs(alpha) * (abs(A64) @ abs(X64))
    if Y0 is not None and beta != 0:
        ref = ref + beta * np.asarray(Y0, dtype=np.float64)
        scale = scale + abs(beta) * abs(np.asarray(Y0, dtype=np.float64))
    assert Y.shape == ref.shape
    assert np.all(np.abs(Y - ref) <= TOL[dtype] * (scale + 1e-30)), np.max(np.abs(Y - ref))


# ------------------------------------------------------------------ public API
@pytest.mark.parametrize("k", KS)
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_spmm_matches_scipy(rng, k, order, dtype):
    A = random_csr(rng, 120, 90, dtype=dtype)
    X = np.asarray(rng.standard_normal((90, k)), dtype=dtype, order=order)
    Y = spla.spmm(spla.CSRMatrix.from_scipy(A), X)
    assert Y.dtype == dtype and Y.flags.c_contiguous
    check(Y, A, X, dtype=dtype)


def test_matmul_operator_and_scipy_input(rng):
    A = random_csr(rng, 50, 40)
    X = rng.standard_normal((40, 6))
    M = spla.CSRMatrix.from_scipy(A)
    check(M @ X, A, X)
    check(spla.spmm(A, X), A, X)  # a scipy matrix is accepted as it is
    assert (M @ X[:, 0]).ndim == 1  # 1-D still goes to spmv


def test_alpha_beta_and_nan_y_at_beta_zero(rng):
    A = random_csr(rng, 60, 30)
    X = rng.standard_normal((30, 5))
    Y0 = rng.standard_normal((60, 5))
    check(spla.spmm(A, X, Y0, alpha=-2.5, beta=0.75), A, X, -2.5, 0.75, Y0)
    poisoned = np.full((60, 5), np.nan)
    Y = spla.spmm(A, X, poisoned, alpha=3.0, beta=0.0)
    assert np.isfinite(Y).all()
    check(Y, A, X, 3.0)
    check(spla.spmm(A, X, np.asfortranarray(Y0), beta=1.0), A, X, 1.0, 1.0, Y0)


def test_strided_and_integer_inputs(rng):
    A = random_csr(rng, 70, 64)
    wide = rng.standard_normal((64, 20))
    check(spla.spmm(A, wide[:, 3:11]), A, wide[:, 3:11])      # row stride > k
    check(spla.spmm(A, wide[:, ::3]), A, wide[:, ::3])        # no unit stride at all
    check(spla.spmm(A, wide[::-1, :4]), A, wide[::-1, :4])    # negative stride
    ints = rng.integers(-5, 5, (64, 3))
    check(spla.spmm(A, ints), A, ints)


@pytest.mark.parametrize("shape", [(1, 1), (1, 40), (40, 1), (0, 5), (5, 0)])
def test_degenerate_shapes(rng, shape):
    A = random_csr(rng, *shape, density=0.5) if min(shape) else sp.csr_matrix(shape)
    X = rng.standard_normal((shape[1], 3))
    Y = spla.spmm(A, X)
    assert Y.shape == (shape[0], 3)
    check(Y, A, X)


def test_k_zero_gives_empty_block(rng):
    A = random_csr(rng, 8, 6)
    assert spla.spmm(A, np.zeros((6, 0))).shape == (8, 0)


@pytest.mark.parametrize("X, message", [
    (np.zeros((7, 3)), "rows"),
    (np.zeros((6, 2, 2)), "2-D"),
    (np.zeros((6, 3), dtype=complex), "real"),
    (np.array([["a"] * 3] * 6), "real"),
    (sp.random(6, 3, density=0.5, format="csr"), "dense"),
    ([[1.0] * 3] * 6, "dense"),
])
def test_bad_x_is_input_error(rng, X, message):
    A = random_csr(rng, 5, 6, density=0.5)
    with pytest.raises(InputError, match=message):
        spla.spmm(A, X)


def test_bad_y_and_scalars(rng):
    A = random_csr(rng, 5, 6, density=0.5)
    X = np.ones((6, 3))
    with pytest.raises(InputError, match="Y must have shape"):
        spla.spmm(A, X, np.ones((5, 4)), beta=1.0)
    with pytest.raises(InputError, match="Y must have shape"):
        spla.spmm(A, X, np.ones(5), beta=1.0)
    with pytest.raises(InputError, match="alpha"):
        spla.spmm(A, X, alpha="2")
    with pytest.raises(InputError, match="beta"):
        spla.spmm(A, X, beta=None)


def test_gpu_kernel_on_cpu_is_kernel_error(rng):
    A = random_csr(rng, 5, 6, density=0.5)
    with pytest.raises(KernelError, match="GPU"):
        spla.spmm(A, np.ones((6, 2)), kernel="regk")
    assert isinstance(spla.spmm(A, np.ones((6, 2)), kernel="scipy"), np.ndarray)


# ------------------------------------------------------- host-side scheduling
def _assert_partition(n_rows, groups, long_rows, dense_rows):
    every = np.concatenate([g.host_rows for g in groups] + [long_rows, np.asarray(dense_rows, np.int64)])
    assert np.array_equal(np.sort(every), np.arange(n_rows)), "each row exactly once"


def test_split_rows_partitions_with_duplicates_and_gaps(rng):
    lengths = rng.integers(0, 3000, 500)
    lengths[:50] = 0
    bins = [("a", rng.choice(500, 200)), ("b", rng.choice(500, 300))]  # overlapping, with gaps
    dense = rng.choice(500, 20, replace=False)
    groups, long_rows = spmm_cuda.split_rows(lengths, bins, dense)
    _assert_partition(500, groups, long_rows, dense)
    assert not np.intersect1d(long_rows, dense).size
    assert np.all(lengths[long_rows] > spmm_cuda.SEGMENT_NNZ)
    for g in groups:
        assert g.max_length <= spmm_cuda.SEGMENT_NNZ
        if g.max_length <= spmm_cuda.LENGTH_CLASSES[-1]:
            assert g.shape(8) == "regk" and g.shape(17) == "subwarp"
        else:
            assert g.shape(8) == g.shape(17) == "warp"
    assert any(g.name.startswith("rest") for g in groups)


def test_schedule_groups_follow_the_spmv_plan():
    A = generators.from_spec("gen:blockdense:20000:30:8192:0.6")
    plan = planner.plan_for(A)
    assert plan.dense_rows.size == 30
    lengths = np.diff(A.indptr).astype(np.int64)
    bins = [(b.name, b.rows) for b in plan.bins if b.name != "dense"]
    groups, long_rows = spmm_cuda.split_rows(lengths, bins, plan.dense_rows)
    _assert_partition(A.n_rows, groups, long_rows, plan.dense_rows)
    assert {g.name.split("<")[0].split(">")[0] for g in groups} <= {"stream", "block", "split", "rest"}
    # without the dense path the same rows become long rows, cut into segments
    groups, long_rows = spmm_cuda.split_rows(lengths, [(b.name, b.rows) for b in plan.bins], [])
    _assert_partition(A.n_rows, groups, long_rows, [])
    assert set(plan.dense_rows) <= set(long_rows)


def test_segment_ranges_cover_long_rows(rng):
    lengths = rng.integers(0, 5000, 40)
    indptr = np.concatenate(([0], np.cumsum(lengths)))
    long_rows = np.flatnonzero(lengths > 1024)
    row, begin, end = spmm_cuda.segment_ranges(indptr, long_rows, 1000)
    assert np.all(end - begin <= 1000) and np.all(end > begin)
    for r in long_rows:
        mine = row == r
        covered = np.concatenate([np.arange(b, e) for b, e in zip(begin[mine], end[mine])])
        assert np.array_equal(covered, np.arange(indptr[r], indptr[r + 1]))


@pytest.mark.parametrize("vec", [1, 2, 4])
def test_warp_shape_covers_k_with_fewest_lanes(vec):
    for k in range(1, 600):
        if vec > 1 and k % vec:
            continue
        cl, j, tiles = spmm_cuda.warp_shape(k, vec)
        assert cl in spmm_cuda.WARP_CL and (j == 1 or cl == 32)
        assert cl * vec * j * tiles >= k > cl * vec * j * (tiles - 1)
        if j == 1 and cl > 1:
            assert cl // 2 * vec < k, "a narrower lane group would have covered k"
    with pytest.raises(KernelError, match="grid.y"):
        spmm_cuda.warp_shape(10**8, 1)


def test_regk_vector_width_matches_header_rule():
    assert [spmm_cuda._regk_vector_width(4, K) for K in spmm_cuda.REGK_K] == [1, 2, 4, 4, 4]
    assert [spmm_cuda._regk_vector_width(8, K) for K in spmm_cuda.REGK_K] == [1, 2, 2, 2, 2]
    assert [spmm_cuda.regk_sub(m) for m in (0, 5, 8, 9, 16, 30, 64, 500)] == [1, 1, 1, 2, 2, 4, 8, 8]


def test_auto_policy():
    poisson = generators.from_spec("gen:poisson2d:64")
    assert spmm_cuda.choose_kernel(poisson, 1) == "spmv-loop"
    assert spmm_cuda.choose_kernel(poisson, 8) == "regk"
    assert spmm_cuda.choose_kernel(poisson, 16) == "regk"
    assert spmm_cuda.choose_kernel(poisson, 17) == "subwarp"
    banded = generators.from_spec("gen:banded:3000:40")  # 81 nnz per row: a warp per row
    assert spmm_cuda.choose_kernel(banded, 8) == "warp"
    huge = generators.from_spec("gen:hugerows:20000:3:5000")
    assert spmm_cuda.choose_kernel(huge, 8) == spmm_cuda.AUTO_SKEWED_SMALL_K
    assert spmm_cuda.choose_kernel(huge, 16) == spmm_cuda.AUTO_SKEWED_SMALL_K
    assert spmm_cuda.choose_kernel(huge, 17) == "adaptive"
    assert spmm_cuda.AUTO_SKEWED_SMALL_K in spmm_cuda.KERNELS


# ------------------------------------------------------- fused schedule (host side)
@pytest.mark.parametrize("nnz_per_lane", [8, 16])
def test_fused_partition_places_every_row_once(rng, nnz_per_lane):
    lengths = np.concatenate([rng.integers(0, 40, 3000), rng.integers(40, 3000, 200), [0, 0, 5000, 1024, 1025]])
    rng.shuffle(lengths)
    excluded = rng.choice(lengths.size, 17, replace=False)
    classes, long_rows = spmm_cuda.fused_partition(lengths, excluded, nnz_per_lane=nnz_per_lane)
    placed = np.concatenate([rows for _, rows in classes] + [long_rows, excluded])
    assert np.array_equal(np.sort(placed), np.arange(lengths.size)), "every row exactly once"
    assert np.all(lengths[long_rows] > spmm_cuda.SEGMENT_NNZ)
    kinds = [kind for kind, _ in classes]
    assert kinds == [k for k in spmm_cuda.FUSED_LAUNCH_ORDER if k in kinds], "longest work first"
    for kind, rows in classes:
        assert np.all(np.diff(rows) > 0), "rows ascending within a class (neighbouring output rows)"
        lens = lengths[rows]
        assert np.all(lens <= max(nnz_per_lane * kind, 0) if kind < 32 else lens <= spmm_cuda.SEGMENT_NNZ)
        if kind > 1:
            assert np.all(lens > nnz_per_lane * kind // 2), "a narrower group would have fit"
        assert all(spmm_cuda.fused_sub(int(n), nnz_per_lane) == kind for n in lens[:50])


def test_fused_table_block_ranges():
    classes = [(32, np.arange(9)), (4, np.arange(100, 200)), (1, np.arange(1000, 1300))]
    table, row_list, n_blocks = spmm_cuda.fused_table(classes, n_segments=20)
    per_block = {spmm_cuda.FUSED_KIND_SEGMENT: 8, 32: 8, 4: 64, 1: 256}
    assert table[:, 1].tolist() == [spmm_cuda.FUSED_KIND_SEGMENT, 32, 4, 1]
    assert table[:, 3].tolist() == [20, 9, 100, 300]
    blocks = [-(-n // per_block[kind]) for kind, n in zip(table[:, 1], table[:, 3])]
    assert table[:, 0].tolist() == np.concatenate(([0], np.cumsum(blocks)[:-1])).tolist()
    assert n_blocks == sum(blocks)
    assert table[1:, 2].tolist() == [0, 9, 109], "row classes index one concatenated row list"
    assert np.array_equal(row_list, np.concatenate([rows for _, rows in classes]))
    # the kernel finds a block's class as the last entry whose first block <= it
    for block in range(n_blocks):
        cls = max(c for c in range(len(table)) if block >= table[c, 0])
        assert 0 <= block - table[cls, 0] < blocks[cls]


def test_fused_kind_constant_matches_kernel():
    text = (spla.cuda.kernel_dir() / "spmm_fused.cu").read_text()
    assert f"SPLA_FUSED_KIND_SEGMENT = {spmm_cuda.FUSED_KIND_SEGMENT};" in text
    assert "ITEMS_PER_BLOCK = 256 / SUB" in text and spmm_cuda.BLOCK == 256
    for sub in spmm_cuda.FUSED_SUBS:
        assert f"case {sub}: SPLA_FUSED_CASE({sub}, false)" in text


def test_dense_panel_engine_rule():
    # without a split-K pick the panel rule is the round-1 one: cuBLAS unless dbuf's tiles fill the GPU
    assert spmm_cuda.dense_gemm_kernel(2000, 8, np.float64, 100_000) == "cublas"
    gemm_cuda = pytest.importorskip("spla.backend.gemm_cuda")
    sms = gemm_cuda.multiprocessor_count()
    # few 128 x 128 tiles, no column count: cuBLAS; enough tiles to fill the SMs: dbuf
    assert spmm_cuda.dense_gemm_kernel(2000, 8, np.float32) == "cublas"
    assert spmm_cuda.dense_gemm_kernel(128 * sms, 128, np.float32) == "dbuf"
    # the hybrid benchmark's panel (2,000 rows x 100k columns): the GEMM core's own rule, if it picks split-K
    for k in (8, 32):
        choice = gemm_cuda.auto_kernel(np.float32, (2000, k, 100_000))
        expected = "auto" if "split" in choice and spmm_cuda.PANEL_USES_GEMM_CORE_SPLITK else \
            ("dbuf" if -(-2000 // 128) * -(-k // 128) >= sms else "cublas")
        assert spmm_cuda.dense_gemm_kernel(2000, k, np.float32, 100_000) == expected
        assert spmm_cuda.gemm_core_auto_choice(2000, k, 100_000, np.float32) == choice


def test_kernel_names_are_declared_and_prefixed():
    names = [n for src in spmm_cuda.WARP_SOURCES.values() for n in src.names]
    names += [n for src in spmm_cuda.SUBWARP_SOURCES.values() for n in src.names]
    names += [n for src in spmm_cuda.REGK_SOURCES.values() for n in src.names]
    assert len(names) == len(set(names)) == 4 * 32 + 4 * 16 + 8 * 20
    fused = [n for src in spmm_cuda.FUSED_SOURCES.values() for n in src.names]
    assert len(set(fused)) == 8 * 5 + 4  # 5 register widths per (value, index, layout) + init per (value, index)
    names += fused
    assert all(n.startswith("spla_spmm_") for n in names)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_spmm_kernels_compile_for_sm90(tmp_path):
    """One translation unit with a representative instantiation of every template axis."""
    sources = [spmm_cuda.WARP_SOURCES[("float", "int")], spmm_cuda.WARP_SOURCES[("double", "long long")],
               spmm_cuda.SUBWARP_SOURCES[("float", "int")], spmm_cuda.SUBWARP_SOURCES[("double", "long long")],
               spmm_cuda.REGK_SOURCES[("float", "int", False)], spmm_cuda.REGK_SOURCES[("double", "long long", True)],
               spmm_cuda.FUSED_SOURCES[("float", "int", False)], spmm_cuda.FUSED_SOURCES[("double", "long long", True)]]
    body = ['#include "spmm_warp.cu"', '#include "spmm_subwarp.cu"', '#include "spmm_regk.cu"',
            '#include "spmm_fused.cu"']
    for src in sources:
        for i, name in enumerate(src.names):
            if i % 5 == 0 or "true" in name and "warp" in name and i % 3 == 0 or "fused" in name:
                body.append(f"static const void* p{len(body)} = (const void*)&{name};")
    unit = tmp_path / "spmm_all.cu"
    unit.write_text("\n".join(body) + "\n")
    kernel_dir = spla.cuda.kernel_dir()
    result = subprocess.run(["nvcc", "-arch=sm_90", "-std=c++17", f"-I{kernel_dir}", "--cubin", "-Xptxas", "-v",
                             "-o", str(tmp_path / "out.cubin"), str(unit)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    spills = [int(line.split("bytes spill stores")[0].split(",")[-1]) for line in result.stderr.splitlines()
              if "bytes spill stores" in line]
    assert spills, "ptxas printed no resource usage"
    # ptxas may trade a register or three (<= 12 bytes, L1-resident) for 32-register full occupancy
    # in the short-k warp shapes; anything larger means an accumulator array went to local memory.
    assert max(spills) <= 16, spills


# ------------------------------------------------------------------------ CLI
def test_cli_spmm_json_on_cpu():
    result = CliRunner().invoke(main, ["spmm", "gen:poisson2d:32", "--k", "4", "--device", "cpu", "--order", "F",
                                       "--repeat", "2", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)["spmm"]
    assert report["k"] == 4 and report["order"] == "F" and report["device"] == "cpu"
    (row,) = report["rows"]
    assert row["kernel"] == "scipy" and row["ok"] and row["rel_error"] < 1e-6
    assert row["speedup_vs_spmvs"] > 0 and report["spmv_ms"] > 0
    assert report["flops"] == 2 * report["matrix"]["nnz"] * 4


def test_cli_spmm_table_on_cpu():
    result = CliRunner().invoke(main, ["spmm", "gen:random:300:4", "--k", "3", "--device", "cpu", "--repeat", "2"])
    assert result.exit_code == 0, result.output
    assert "vs 3 SpMVs" in result.output and "ok" in result.output


@pytest.mark.parametrize("args, message", [
    (["--kernel", "warp", "--device", "cpu"], "runs on the GPU"),
    (["--k", "0"], "0"),
    (["--k", "257"], "257"),
])
def test_cli_spmm_bad_arguments(args, message):
    result = CliRunner().invoke(main, ["spmm", "gen:poisson2d:8"] + args)
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output
