"""SpMM on the GPU: every kernel against float64 SciPy on fresh random inputs
and structured cases, both X orders, both value and index types, alpha/beta
with NaN-poisoned outputs, long-row segments and the hybrid dense panel."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner

import spla
from spla.cli import main
from spla.errors import InputError, KernelError
from spla.io import generators
from spla.planning import adaptive as planner

pytestmark = pytest.mark.gpu
cupy = pytest.importorskip("cupy")

from spla.backends.cuda import spmm_launch  # noqa: E402  (after the CuPy check)
from spla.backends.cuda.gemm import multiprocessor_count  # noqa: E402
from spla.bench.spmm import run_kernel  # noqa: E402
from spla.bench.variants import SPMM_VARIANTS  # noqa: E402
from spla.planning import gemm as G  # noqa: E402
from spla.planning import spmm as P  # noqa: E402

KS = (1, 2, 3, 4, 7, 8, 16, 33, 128)
DTYPES = (np.float32, np.float64)
# |Y - ref| <= TOL * (|alpha| |A| @ |X| + |beta| |Y0|), elementwise: float32 sums of
# thousands of terms drift by ~sqrt(n) * 6e-8 of the absolute sum, float64 by 1e-16.
TOL = {np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-11}
SPLA_KERNELS = ("regk", "warp", "subwarp", "adaptive", "adaptive-sparse", "fused", "fused16", "fused-sparse",
                "auto")
ALL_KERNELS = SPLA_KERNELS + ("spmv-loop", "cusparse", "cusparse-cupy")


def fits(kernel, k):
    return kernel != "regk" or k <= P.REGK_MAX_K


def spmm_any(M, X, *args, kernel, **kw):
    """spla.spmm for public kernels; the benchmark hook (spla.bench.spmm.run_kernel) for variants."""
    if kernel not in SPMM_VARIANTS:
        return spla.spmm(M, X, *args, kernel=kernel, **kw)
    M = spla.as_csr(M).to_device()
    Y = args[0] if args else kw.pop("Y", None)
    Y = None if Y is None else cupy.asarray(Y).astype(M.dtype, copy=False)
    return run_kernel(M, cupy.asarray(X).astype(M.dtype, copy=False), kernel, Y, **kw)


def check(Y, A, X, alpha=1.0, beta=0.0, Y0=None):
    """Y (device) against SciPy float64, with a bound that scales with each entry's magnitude."""
    assert isinstance(Y, cupy.ndarray) and Y.flags.c_contiguous
    Yh = cupy.asnumpy(Y).astype(np.float64)
    A64 = A.astype(np.float64)
    X64 = np.asarray(cupy.asnumpy(X) if isinstance(X, cupy.ndarray) else X, dtype=np.float64)
    ref = alpha * (A64 @ X64)
    bound = abs(alpha) * (abs(A64) @ abs(X64))
    if Y0 is not None and beta != 0:
        Y0h = np.asarray(cupy.asnumpy(Y0) if isinstance(Y0, cupy.ndarray) else Y0, dtype=np.float64)
        ref = ref + beta * Y0h
        bound = bound + abs(beta) * abs(Y0h)
    assert Yh.shape == ref.shape
    assert np.isfinite(Yh).all(), "non-finite output (a NaN-poisoned Y was read, or an unwritten row)"
    err = np.abs(Yh - ref)
    limit = TOL[np.dtype(Y.dtype)] * bound + 1e-30
    bad = np.argwhere(err > limit)
    assert bad.size == 0, f"{len(bad)} wrong entries, first at {bad[:5].tolist()}: " \
                          f"got {Yh[tuple(bad[0])]}, expected {ref[tuple(bad[0])]}"


def mixed_matrix(rng, n_rows=1000, n_cols=3000, dtype=np.float64):
    """Every length class at once: empty rows, 1..8, up to 64, up to 1024, and rows past 1024."""
    lengths = rng.integers(0, 9, n_rows)
    lengths[rng.choice(n_rows, 100, replace=False)] = 0
    lengths[rng.choice(n_rows, 60, replace=False)] = rng.integers(9, 65, 60)
    lengths[rng.choice(n_rows, 15, replace=False)] = rng.integers(65, 1025, 15)
    lengths[rng.choice(n_rows, 3, replace=False)] = rng.integers(1100, 2900, 3)
    return rows_of_lengths(rng, np.minimum(lengths, n_cols), n_cols, dtype)


def rows_of_lengths(rng, lengths, n_cols, dtype=np.float64):
    indptr = np.concatenate(([0], np.cumsum(lengths)))
    cols = np.concatenate([np.sort(rng.choice(n_cols, n, replace=False)) for n in lengths] or [[]])
    data = rng.uniform(-1, 1, indptr[-1])
    return sp.csr_matrix((data.astype(dtype), cols.astype(np.int64), indptr), shape=(len(lengths), n_cols))


def run(A, X, *args, kernel, index_dtype=None, **kw):
    M = spla.CSRMatrix.from_scipy(A, index_dtype=index_dtype)
    return spmm_any(M, X, *args, kernel=kernel, **kw)


# -------------------------------------------------------------- random inputs
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("k", KS)
@pytest.mark.parametrize("kernel", ALL_KERNELS)
def test_mixed_matrix_matches_scipy(rng, kernel, k, order, dtype):
    if not fits(kernel, k):
        pytest.skip("regk holds at most 16 columns")
    if kernel == "spmv-loop" and k > 16:
        pytest.skip("k separate SpMVs: covered up to 16")
    A = mixed_matrix(rng, dtype=dtype)
    X = cupy.asarray(rng.standard_normal((A.shape[1], k)).astype(dtype), order=order)
    check(run(A, X, kernel=kernel), A, X)


@pytest.mark.parametrize("k", (1, 4, 8, 33))
@pytest.mark.parametrize("kernel", SPLA_KERNELS)
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
def test_int64_indices(rng, kernel, k, dtype):
    if not fits(kernel, k):
        pytest.skip("regk holds at most 16 columns")
    A = mixed_matrix(rng, 600, 2000, dtype=dtype)
    X = cupy.asarray(rng.standard_normal((A.shape[1], k)).astype(dtype))
    M = spla.CSRMatrix.from_scipy(A, index_dtype=np.int64)
    assert M.index_dtype == np.int64
    check(spmm_any(M, X, kernel=kernel), A, X)


# ----------------------------------------------------------- structured cases
def structured(name, rng):
    if name == "all-empty":
        return sp.csr_matrix((300, 200))
    if name == "empty-rows":
        A = sp.random(500, 400, density=0.02, format="csr", random_state=rng)
        A[::3] = 0
        A.eliminate_zeros()
        return A
    if name == "one-huge-row":
        lengths = rng.integers(1, 5, 2000)
        lengths[777] = 40_000
        return rows_of_lengths(rng, lengths, 60_000)
    if name == "all-dense":
        return sp.csr_matrix(rng.uniform(-1, 1, (150, 130)))
    if name == "1x1":
        return sp.csr_matrix(np.array([[2.5]]))
    if name == "wide":
        return sp.random(50, 5000, density=0.05, format="csr", random_state=rng)
    if name == "tall":
        return sp.random(5000, 50, density=0.1, format="csr", random_state=rng)
    if name in ("n257", "n1025"):
        n = int(name[1:])
        return sp.random(n, n, density=0.01, format="csr", random_state=rng)
    if name == "n-by-1":
        return sp.random(700, 1, density=0.5, format="csr", random_state=rng)
    if name == "1-by-n":
        return sp.random(1, 700, density=0.5, format="csr", random_state=rng)
    if name == "duplicates":  # unsorted columns with repeats, which CSR allows and SciPy sums
        indptr = np.arange(0, 30 * 101, 30)
        return sp.csr_matrix((rng.uniform(-1, 1, 3000), rng.integers(0, 80, 3000), indptr), shape=(100, 80))
    raise ValueError(name)


STRUCTURED = ("all-empty", "empty-rows", "one-huge-row", "all-dense", "1x1", "wide", "tall", "n257", "n1025",
              "n-by-1", "1-by-n", "duplicates")


@pytest.mark.parametrize("k", (3, 8, 33))
@pytest.mark.parametrize("kernel", SPLA_KERNELS + ("cusparse",))
@pytest.mark.parametrize("case", STRUCTURED)
def test_structured(rng, case, kernel, k):
    if not fits(kernel, k):
        pytest.skip("regk holds at most 16 columns")
    if kernel == "cusparse" and case == "duplicates":
        pytest.skip("cuSPARSE assumes canonical CSR")
    A = structured(case, rng).astype(np.float32)
    X = cupy.asarray(rng.standard_normal((A.shape[1], k)).astype(np.float32))
    check(run(A, X, kernel=kernel), A, X)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("k", (4, 33))
def test_cusparse_anchor_is_the_fastest_csr_algorithm_and_exact(rng, dtype, k):
    """The SpMM anchor times each CSR algorithm cuSPARSE takes here and keeps the fastest by device
    time (naming the ones it left out); every one of them gives the product; the kept one is cached
    per k."""
    from spla.backends.cuda import cusparse

    A = mixed_matrix(rng, dtype=dtype)
    M = spla.CSRMatrix.from_scipy(A).to_device()
    X = cupy.asarray(rng.standard_normal((A.shape[1], k)).astype(dtype))
    Y = cupy.empty((A.shape[0], k), dtype)
    ran = []
    for alg in cusparse.SPMM_ANCHOR_ALGORITHMS:
        try:
            one = cusparse.CusparseSpmm(M, X, Y, alg)
        except KernelError:
            continue
        Y.fill(np.nan)
        check(one(X, Y, dtype(1), dtype(0)), A, X)
        ran.append(alg)
    assert "csr_alg2" in ran or "csr_alg3" in ran, ran  # row-major X: at least one of them
    anchor = cusparse.spmm_anchor(M, X, Y)
    assert anchor.name in ran and cusparse.spmm_anchor(M, X, Y) is anchor
    assert set(anchor.timings) | set(anchor.left_out) == set(cusparse.SPMM_ANCHOR_ALGORITHMS)
    assert anchor.timings[anchor.name] == min(anchor.timings.values()) > 0
    assert cusparse.spmm_anchor(M, X[:, :2].copy(), Y[:, :2].copy()) is not anchor  # another k, its own pick
    with pytest.raises(KernelError, match="unknown cuSPARSE SpMM algorithm"):
        cusparse.CusparseSpmm(M, X, Y, "csr_alg9")


def test_cusparse_anchors_launch_on_the_current_stream_whoever_moved_the_handle(rng):
    """The anchors keep no record of the shared cuSPARSE handle's stream: CuPy's bindings point it at
    CuPy's current stream on every call, even after other code pointed it elsewhere."""
    from cupy_backends.cuda.libs import cusparse as lib

    from spla.backends.cuda import cusparse

    A = mixed_matrix(rng, dtype=np.float32)
    M = spla.CSRMatrix.from_scipy(A).to_device()
    X = cupy.asarray(rng.standard_normal((A.shape[1], 33)).astype(np.float32))
    Y = cupy.empty((A.shape[0], 33), np.float32)
    x, y = X[:, 0].copy(), Y[:, 0].copy()
    stream = cupy.cuda.Stream(non_blocking=True)
    spmv, spmm = cusparse.CusparseSpmv(M, "csr_alg1"), cusparse.CusparseSpmm(M, X, Y, "csr_alg2")
    for call in (lambda: spmv(x, y), lambda: spmm(X, Y, 1.0, 0.0)):
        for _ in range(2):  # the second call comes on the same stream after the handle moved
            lib.setStream(spmv.handle, 0)
            with stream:
                call()
            assert lib.getStream(spmv.handle) == stream.ptr
        stream.synchronize()
    check(Y, A, X)
    xh = x.get().astype(np.float64)
    assert np.linalg.norm(y.get() - A @ xh) <= 1e-5 * np.linalg.norm(abs(A) @ abs(xh))


# ------------------------------------------------------------------ alpha/beta
@pytest.mark.parametrize("k", (1, 4, 8, 33))
@pytest.mark.parametrize("kernel", ALL_KERNELS)
def test_beta_zero_never_reads_y(rng, kernel, k):
    if not fits(kernel, k):
        pytest.skip("regk holds at most 16 columns")
    A = mixed_matrix(rng, 400, 1500, dtype=np.float32)
    X = cupy.asarray(rng.standard_normal((A.shape[1], k)).astype(np.float32))
    poisoned = cupy.full((A.shape[0], k), np.nan, dtype=np.float32)
    check(run(A, X, poisoned, alpha=-1.5, beta=0.0, kernel=kernel), A, X, alpha=-1.5)


@pytest.mark.parametrize("y_layout", ["C", "F", "strided"])
@pytest.mark.parametrize("k", (2, 8, 33))
@pytest.mark.parametrize("kernel", ALL_KERNELS)
def test_alpha_beta(rng, kernel, k, y_layout):
    if not fits(kernel, k):
        pytest.skip("regk holds at most 16 columns")
    A = mixed_matrix(rng, 400, 1500)
    X = cupy.asarray(rng.standard_normal((A.shape[1], k)))
    Y0 = cupy.asarray(rng.standard_normal((A.shape[0], 2 * k)))
    Y0 = {"C": cupy.ascontiguousarray(Y0[:, :k]), "F": cupy.asfortranarray(Y0[:, :k]), "strided": Y0[:, ::2]}[y_layout]
    check(run(A, X, Y0, alpha=0.5, beta=-2.0, kernel=kernel), A, X, 0.5, -2.0, Y0)


# --------------------------------------------------------------------- layouts
@pytest.mark.parametrize("layout", ["column-slice", "misaligned", "reversed", "every-other-column", "F-slice"])
@pytest.mark.parametrize("k", (4, 8, 16, 32))
@pytest.mark.parametrize("kernel", SPLA_KERNELS)
def test_x_layouts(rng, kernel, k, layout):
    """Views whose leading dimension or base address rule out vector loads must still be right."""
    if not fits(kernel, k):
        pytest.skip("regk holds at most 16 columns")
    A = mixed_matrix(rng, 500, 1200, dtype=np.float32)
    n = A.shape[1]
    wide = cupy.asarray(rng.standard_normal((n, 2 * k + 3)).astype(np.float32))
    if layout == "column-slice":
        X = wide[:, 1:k + 1]                      # ld = 2k+3, base 4 bytes off
    elif layout == "misaligned":
        flat = cupy.asarray(rng.standard_normal(n * k + 1).astype(np.float32))
        X = flat[1:].reshape(n, k)                # contiguous but not 16-byte aligned
    elif layout == "reversed":
        X = wide[::-1, :k]
    elif layout == "every-other-column":
        X = wide[:, :2 * k:2]
    else:
        X = cupy.asfortranarray(wide)[:, 1:k + 1]  # column-major with column stride n
    check(run(A, X, kernel=kernel), A, X)


def test_f_order_regk_reads_columns_directly(rng):
    A = mixed_matrix(rng, 300, 900, dtype=np.float32)
    X = cupy.asfortranarray(cupy.asarray(rng.standard_normal((900, 8)).astype(np.float32)))
    operand = spmm_launch.as_operand(X, allow_colmajor=True)
    assert operand.colmajor and operand.ld == 900 and operand.array is X
    check(run(A, X, kernel="regk"), A, X)


# ------------------------------------------------------- adaptive: long rows, dense
def test_long_rows_are_segmented(rng):
    lengths = rng.integers(0, 6, 3000)
    lengths[[5, 1234, 2999]] = [5000, 20_000, 1025]
    A = rows_of_lengths(rng, lengths, 200_000, np.float32)  # 2.5-10% dense: not for the dense panel
    M = spla.CSRMatrix.from_scipy(A).to_device()
    schedule = P.hybrid_schedule(M)
    assert set(schedule.long_rows.tolist()) == {5, 1234, 2999}
    assert schedule.n_segments == 5 + 20 + 2 and not schedule.panels
    X = cupy.asarray(rng.standard_normal((A.shape[1], 8)).astype(np.float32))
    Y0 = cupy.asarray(rng.standard_normal((A.shape[0], 8)).astype(np.float32))
    check(spla.spmm(M, X, kernel="adaptive"), A, X)
    check(spla.spmm(M, X, Y0, alpha=2.0, beta=3.0, kernel="adaptive"), A, X, 2.0, 3.0, Y0)


def _every_fused_class(rng):
    """Row lengths that fill every fused class: short, middling and long rows, and two rows cut in segments."""
    lengths = np.concatenate([rng.integers(0, 9, 2000), rng.integers(9, 300, 300), rng.integers(300, 1025, 20)])
    lengths[[7, 1500]] = [5000, 1025]
    rng.shuffle(lengths)
    return lengths


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("k", (1, 3, 8, 16))
def test_fused_long_rows_and_every_class(rng, k, order):
    lengths = _every_fused_class(rng)
    A = rows_of_lengths(rng, lengths, 150_000, np.float32)  # long rows 0.7-3% dense: not for the dense panel
    M = spla.CSRMatrix.from_scipy(A).to_device()
    fs = P.fused_schedule(M, segment_nnz=P.SEGMENT_NNZ)  # 1,024 (fused:1024): rows up to it fill every class
    kinds = fs.table[:, 1].tolist()
    assert kinds[0] == P.FUSED_KIND_SEGMENT and fs.n_long_rows == 2 and not fs.panels
    assert set(kinds) == {P.FUSED_KIND_SEGMENT, *P.FUSED_SUBS}, "every class is exercised"
    X = cupy.asarray(rng.standard_normal((A.shape[1], k)).astype(np.float32), order=order)
    Y0 = cupy.full((A.shape[0], k), cupy.nan, dtype=np.float32)
    check(spla.spmm(M, X, Y0, beta=0.0, kernel="fused:1024"), A, X)
    Y0 = cupy.asarray(rng.standard_normal((A.shape[0], k)).astype(np.float32))
    check(spla.spmm(M, X, Y0, alpha=2.0, beta=-3.0, kernel="fused:1024"), A, X, 2.0, -3.0, Y0)
    check(spla.spmm(M, X, Y0, alpha=2.0, beta=-3.0, kernel="fused"), A, X, 2.0, -3.0, Y0)  # segments of 256
    check(spmm_any(M, X, Y0, alpha=0.5, beta=1.0, kernel="fused16"), A, X, 0.5, 1.0, Y0)
    # called twice: the cached schedule and functions give the same answer again
    short = cupy.asarray(lengths <= P.SEGMENT_NNZ)  # segment sums use atomics: order may vary there
    first = spla.spmm(M, X, kernel="fused:1024")
    assert cupy.array_equal(first[short], spla.spmm(M, X, kernel="fused:1024")[short])


@pytest.mark.parametrize("dtype, k", [(np.float32, 20), (np.float32, 32), (np.float32, 64), (np.float32, 128),
                                      (np.float64, 18), (np.float64, 64)])
def test_fused_wide_long_rows_and_every_class(rng, dtype, k):
    """fused past k = 16 (spla_spmm_fused_wide): every class from K / W lanes a row up and the
    segments, with alpha, beta and Y; X views it cannot read with vectors run adaptive."""
    lengths = _every_fused_class(rng)
    A = rows_of_lengths(rng, lengths, 150_000, dtype)
    M = spla.CSRMatrix.from_scipy(A).to_device()
    plan = P.plan_spmm(M, k, "fused:1024")  # rows up to 1,024 fill every class (the default cuts them at 256)
    lanes = P.fused_wide_lanes(k, dtype)
    assert plan.kernel == "fused" and lanes is not None
    assert set(plan.schedule.table[:, 1].tolist()) == {P.FUSED_KIND_SEGMENT, *(s for s in P.FUSED_SUBS if s >= lanes)}
    X = cupy.asarray(rng.standard_normal((A.shape[1], k)).astype(dtype))
    Y0 = cupy.full((A.shape[0], k), cupy.nan, dtype=dtype)
    check(spla.spmm(M, X, Y0, beta=0.0, kernel="fused:1024"), A, X)
    check(spla.spmm(M, X, Y0, beta=0.0, kernel="fused"), A, X)  # segments of 256
    Y0 = cupy.asarray(rng.standard_normal((A.shape[0], k)).astype(dtype))
    check(spla.spmm(M, X, Y0, alpha=2.0, beta=-3.0, kernel="fused:1024"), A, X, 2.0, -3.0, Y0)
    check(spla.spmm(M, X, Y0, alpha=2.0, beta=-3.0, kernel="fused"), A, X, 2.0, -3.0, Y0)
    wide = cupy.asarray(rng.standard_normal((A.shape[1], k + 1)).astype(dtype))
    check(spla.spmm(M, wide[:, 1:], kernel="fused"), A, wide[:, 1:])  # ld k + 1, base 1 value off: adaptive
    check(spla.spmm(M, cupy.asfortranarray(X), kernel="fused"), A, X)


def _gemm_engines(dtype):
    engines = ["cublas"]
    split_k = [name for name in G.ALL_KERNELS if "split" in name]
    return engines + (["regblock", "dbuf"] + split_k if np.dtype(dtype) == np.float32 else [])


@pytest.mark.parametrize("k", (8, 33, 128))
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
def test_hybrid_dense_panel(rng, dtype, k):
    A = generators.from_spec("gen:blockdense:20000:30:8192:0.6", dtype=dtype)
    M = A.to_device()
    plan = planner.plan_for(M)
    schedule = P.hybrid_schedule(M)
    assert plan.dense_rows.size == 30, "the plan should route the 30 dense rows to the dense path"
    assert schedule.dense_rows == 30 and schedule.panels
    panel = schedule.panels[0]
    assert panel.density >= plan.thresholds.dense_threshold
    dense_set = set(plan.dense_rows.tolist())
    assert not any(dense_set & set(g.rows.tolist()) for g in schedule.groups), "dense rows run twice"
    S = A.to_scipy()
    X = cupy.asarray(rng.standard_normal((A.n_cols, k)).astype(dtype))
    Y0 = cupy.asarray(rng.standard_normal((A.n_rows, k)).astype(dtype))
    for engine in _gemm_engines(dtype):
        check(run_kernel(M, X, "adaptive", dense_gemm=engine), S, X)
        check(run_kernel(M, X, "adaptive", Y0, alpha=-1.0, beta=0.5, dense_gemm=engine),
              S, X, -1.0, 0.5, Y0)
    assert not P.hybrid_schedule(M, dense=False).panels
    check(run_kernel(M, X, "adaptive-sparse"), S, X)
    fs = P.fused_schedule(M)
    assert fs.panels and not fs.n_long_rows, "fused: the dense rows go to the panel, not to segments"
    listed = set(cupy.asnumpy(fs.row_list).tolist()) if fs.table[:, 1].max() > 0 else set()
    assert not dense_set & listed, "fused: dense rows run twice"
    # the default panel engine (dense_gemm_kernel: the GEMM core's split-K rule or cuBLAS) is what auto runs
    print("default panel engine:", P.dense_gemm_kernel(30, k, dtype, panel.width, multiprocessor_count()))
    for engine in _gemm_engines(dtype) + ["auto"]:
        check(run_kernel(M, X, "fused", dense_gemm=engine), S, X)
        check(run_kernel(M, X, "fused", Y0, alpha=-1.0, beta=0.5, dense_gemm=engine),
              S, X, -1.0, 0.5, Y0)
    assert P.fused_schedule(M, dense=False).n_long_rows == 30
    check(run_kernel(M, X, "fused-sparse"), S, X)
    check(run_kernel(M, X, "fused-sparse", Y0, alpha=-1.0, beta=0.5), S, X, -1.0, 0.5, Y0)
    check(spla.spmm(M, X, kernel="auto"), S, X)


# ---------------------------------------------------------------------- errors
@pytest.mark.parametrize("palette", [False, True], ids=["values", "palette"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("k", (1, 2, 3, 8, 33))
def test_dia_on_a_stencil_and_auto_runs_it_up_to_16_columns(monkeypatch, rng, dtype, k, palette):
    """dia over a 3-D stencil of a few coefficients (rows cut at the grid's edges), from its values or
    a palette's codes, with alpha, beta and a strided Y; auto runs it on the stencil up to k = 16."""
    from spla.planning import dia

    monkeypatch.setattr(dia, "PALETTE_MIN_BYTES", 0 if palette else 2**62)
    host = generators.poisson3d(40).to_scipy().tocsr()  # 64,000 rows: the SpMV rule's dia
    host.data = rng.choice([-1.0, -0.5, 6.0, 2.5], host.nnz).astype(dtype)
    A = spla.CSRMatrix.from_scipy(host).to_device()
    X = cupy.asarray(rng.standard_normal((host.shape[1], k)).astype(dtype))
    Y0 = cupy.asarray(rng.standard_normal((host.shape[0], 2 * k)).astype(dtype))[:, ::2]
    check(spla.spmm(A, X, Y0, alpha=0.5, beta=-2.0, kernel="dia"), host, X, 0.5, -2.0, Y0)
    assert (dia.palette(A, dia.structure(A)) is not None) == palette
    assert P.choose_kernel(A, k) == ("dia" if 1 < k <= P.DIA_MAX_K else "spmv-loop" if k == 1 else "subwarp")
    check(spla.spmm(A, X), host, X)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kernel", ["auto", "dia", "subwarp", "warp", "regk", "fused", "adaptive"])
def test_hot_path_gives_the_checked_calls_bits(rng, kernel, dtype):
    """After the first (checked) call binds a launcher on A, later calls take the hot path (the
    kernel's launches packed once): the same bits into fresh outputs, and X off a 16-byte boundary
    runs unpacked with narrower vectors, still right."""
    A = generators.poisson2d(48).astype(dtype)  # dia applies
    k = 8
    X = cupy.asarray(rng.uniform(-1, 1, (A.n_cols, k)).astype(dtype))
    first = spla.spmm(A, X, alpha=1.5, kernel=kernel)
    check(first, A.to_scipy(), X, alpha=1.5)
    for _ in range(3):
        out = cupy.full_like(first, np.nan)
        assert spla.spmm(A, X.copy(), out=out, alpha=1.5, kernel=kernel) is out
        assert cupy.array_equal(out.view(np.uint8), first.view(np.uint8))
    buffer = cupy.empty(X.size + 1, dtype=dtype)
    buffer[1:] = X.ravel()
    shifted = buffer[1:].reshape(X.shape)
    assert shifted.flags.c_contiguous and shifted.data.ptr % 16
    check(spla.spmm(A, shifted, alpha=1.5, kernel=kernel), A.to_scipy(), X, alpha=1.5)


@pytest.mark.parametrize("kernel", ["fused", "adaptive"])
@pytest.mark.parametrize("case", ["segments", "panels"])
def test_hot_path_packs_only_a_run_of_launches(rng, kernel, case):
    """fused and adaptive on the hot path: with long rows in segments their launches (the rows' init,
    the segments or the fused grid, adaptive's row groups) are packed and re-launched, the same bits
    as the checked call on the rows no atomics sum; with dense panels (GEMVs after the launches)
    nothing is packed and each call runs the launcher."""
    from spla.planning.spmv import SPMM_BOUND_KEY

    if case == "segments":
        lengths = rng.integers(0, 9, 3000)
        lengths[[7, 1500]] = [5000, 1025]
        S = rows_of_lengths(rng, lengths, 150_000, np.float32)
        A = spla.CSRMatrix.from_scipy(S).to_device()
    else:
        A = generators.from_spec("gen:blockdense:20000:30:8192:0.6", dtype=np.float32).to_device()
        S, lengths = A.to_scipy(), np.diff(A.to_scipy().indptr)
    X = cupy.asarray(rng.standard_normal((A.n_cols, 8)).astype(np.float32))
    first = spla.spmm(A, X, alpha=0.5, kernel=kernel)
    check(first, S, X, alpha=0.5)
    short = cupy.asarray(lengths <= P.SEGMENT_NNZ)
    for _ in range(3):
        out = cupy.full_like(first, np.nan)
        assert spla.spmm(A, X.copy(), out=out, alpha=0.5, kernel=kernel) is out
        check(out, S, X, alpha=0.5)
        assert cupy.array_equal(out[short].view(np.uint8), first[short].view(np.uint8))
    launcher = A._cache[SPMM_BOUND_KEY][(kernel, X.shape)]
    if case == "segments":
        schedule = launcher.plan.schedule
        assert schedule.long_rows.size == 2 and launcher.packed[0].x_slot is None  # the init reads no X
        # fused: the init and its grid; adaptive: the init, the segments and a launch per row group
        assert len(launcher.packed) == (2 if kernel == "fused" else 2 + len(schedule.groups))
    else:
        assert launcher.plan.schedule.panels and launcher.packed is None


def test_dia_refuses_a_matrix_off_a_few_diagonals(rng):
    A = spla.CSRMatrix.from_scipy(mixed_matrix(rng, 400, 1500))
    with pytest.raises(KernelError, match="kernel='dia' needs a matrix whose entries lie on a few diagonals"):
        spla.spmm(A, cupy.ones((1500, 4)), kernel="dia")


def test_errors(rng):
    A = spla.CSRMatrix.from_scipy(sp.random(40, 30, density=0.2, format="csr", random_state=rng))
    X = cupy.ones((30, 17))
    with pytest.raises(KernelError, match="at most 16"):
        spla.spmm(A, X, kernel="regk")
    with pytest.raises(KernelError, match="unknown SpMM kernel"):
        spla.spmm(A, X, kernel="nope")
    with pytest.raises(InputError, match="split"):
        spla.spmm(A, X, np.ones((40, 17)), beta=1.0)
    with pytest.raises(InputError, match="rows"):
        spla.spmm(A, cupy.ones((31, 2)))


def test_matmul_operator_on_gpu(rng):
    A = sp.random(64, 48, density=0.1, format="csr", random_state=rng)
    X = cupy.asarray(rng.standard_normal((48, 5)))
    Y = spla.CSRMatrix.from_scipy(A) @ X
    check(Y, A, X)


def test_cli_spmm_all_kernels_on_gpu():
    result = CliRunner().invoke(main, ["spmm", "gen:hugerows:20000:3:5000", "--k", "8", "--device", "gpu",
                                                "--kernel", "all", "--repeat", "3", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)["spmm"]
    assert {row["kernel"] for row in report["rows"]} >= set(P.KERNELS) - {"auto"}
    # dia runs only where the entries lie on a few diagonals: its row says why not
    assert all(row.get("ok") or (row["kernel"] == "dia" and "few diagonals" in row["failed"])
               for row in report["rows"]), [r for r in report["rows"] if not r.get("ok")]
    assert report["plan"]
