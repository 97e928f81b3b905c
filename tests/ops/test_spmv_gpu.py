"""GPU SpMV: every kernel x float32/float64 x int32/int64 against scipy.sparse.

Cases are fresh random matrices with the awkward structures each kernel must
survive (ids read ``CASE-DTYPE-INDEX-KERNEL``, e.g. ``poisson2d-float32-int32-warp``).
The reference is SciPy in float64 on the matrix and x rounded to the test
dtype, so only the kernel's own rounding is measured. Outputs are NaN-poisoned
before every call: a row a kernel forgets stays NaN, and beta == 0 must never
read y.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import short_wide

from spla.backends.cuda import spmv as cuda_spmv
from spla.csr import CSRMatrix
from spla.errors import InputError, KernelError
from spla.ops import spmv as ops_spmv
from spla.planning import adaptive, blocked, segmented
from spla.planning import spmv as rules

pytestmark = pytest.mark.gpu

cupy = pytest.importorskip("cupy")

# every registry entry (a new kernel is covered by being registered) plus every kernel parameter
# (dia and band run on matrices of their structure only: tests/ops/test_dia_gpu.py, test_band_gpu.py;
# rle runs on any matrix, so it is here too)
KERNELS = [k for k in rules.KERNELS if k not in rules.OWN_MATRICES_ONLY] + [
    f"{family}:{value}" for family, values in rules.KERNEL_PARAMETERS.items() for value in values
    if family not in rules.OWN_MATRICES_ONLY]
DTYPES = [np.float32, np.float64]
INDEX_DTYPES = [np.int32, np.int64]


def _random(rng, m, n, density):
    return sp.random(m, n, density=density, format="csr", random_state=rng, data_rvs=lambda k: rng.uniform(-1, 1, k))


def _rows(rng, lengths, n_cols):
    """Rows of the given lengths with distinct random columns."""
    lengths = np.asarray(lengths, dtype=np.int64)
    indptr = np.concatenate(([0], np.cumsum(lengths)))
    indices = np.concatenate([rng.choice(n_cols, size=k, replace=False) for k in lengths] or [np.zeros(0, int)])
    return sp.csr_matrix((rng.uniform(-1, 1, indptr[-1]), indices.astype(np.int64), indptr),
                         shape=(len(lengths), n_cols))


def poisson2d(rng, n=37):
    one = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
    return (sp.kron(sp.identity(n), one) + sp.kron(one, sp.identity(n))).tocsr()


def empty_rows(rng):
    A = _random(rng, 700, 500, 0.03).tolil()
    for r in rng.choice(700, 350, replace=False):
        A.rows[r], A.data[r] = [], []
    A[699, :] = 0  # trailing empty row
    return A.tocsr()


def one_heavy_row(rng):
    lengths = rng.integers(0, 4, 3000)
    lengths[1234] = 60000  # most of the nnz, split across chunks
    return _rows(rng, lengths, 200000)


def few_huge_rows(rng):
    lengths = rng.integers(1, 6, 5000)
    lengths[[0, 2500, 4999]] = [20000, 9000, 4097]
    return _rows(rng, lengths, 150000)


def all_dense(rng):
    return sp.csr_matrix(rng.uniform(-1, 1, (70, 300)))


def lengths_1_to_70(rng):
    # every length around the pack and lane widths, starts at every alignment
    return _rows(rng, np.tile(np.arange(1, 71), 6), 400)


def unaligned_starts(rng):
    return _rows(rng, rng.permutation(np.repeat([1, 2, 3, 5, 7, 9, 17, 33, 63, 65, 129, 300], 25)), 2000)


def medium_rows(rng):
    return _rows(rng, rng.integers(200, 1500, 300), 5000)  # the stream/block edge of adaptive


def tile_edges(rng):
    """Rows that end exactly on segmented's tile edges (128, 256, 512 nonzeros), empty rows
    on and between them, a row of exactly one tile, rows crossing one and several edges."""
    pattern = [256, 0, 0, 256, 128, 128, 0, 512, 1, 255, 0, 0, 1024, 64, 191, 0, 513, 3]
    return _rows(rng, pattern * 6 + [0, 0, 0], 3000)


def tile_edges_no_empty(rng):
    """The same edges with no empty row: segmented reads these row ends from its plan's bits."""
    pattern = [256, 256, 128, 128, 512, 1, 255, 1024, 64, 191, 513, 3, 4096, 2]
    return _rows(rng, pattern * 6, 5000)


def tile_edges_short(rng):
    """No empty row and none longer than segmented:4's tile (128): rows of exactly a tile on and
    across its edges, which segmented's bitmap entry for rows within a tile sums."""
    pattern = [128, 128, 1, 127, 64, 64, 128, 3, 125, 128, 2]
    return _rows(rng, pattern * 20, 1000)


def block_tile_edges(rng):
    """The same at staged's tiles (1,024, 2,048, 4,096 nonzeros): rows ending on their edges
    (empty rows on them), a row of exactly one tile, rows of over 128 entries in a tile (staged's
    LONG: summed by a warp) crossing one or several edges, rows of 127-129 around that cut, and
    rows of 31-33 (the cut until session 24)."""
    pattern = [1024, 0, 0, 1024, 2048, 1, 1023, 0, 4096, 33, 4063, 0, 9000, 31, 32, 0, 0, 5, 2000,
               127, 128, 129]
    return _rows(rng, pattern * 2 + [0, 0], 10000)


def many_listed_rows(rng):
    """Staged's warp rows (129-140 entries: over its LONG of 128) by the dozen in a tile, a row of
    300 among them, and rows of 33-40 (a warp's until session 24, a thread's since) between them:
    a tile's list holds as many rows as fit (its length is TILE / (LONG + 1) + 2)."""
    group = np.r_[300, rng.integers(129, 141, 30), rng.integers(33, 41, 30)]
    return _rows(rng, np.tile(group, 8), 5000)


def even_lengths(rng):
    """Runs of rows of one even length (2-128) with an empty row between runs: staged's threads
    start such rows at bank offsets and wrap (kernels/spmv_staged.cu, staged_bank_offset)."""
    runs = [np.r_[np.full(70, length), 0] for length in (2, 4, 8, 16, 24, 32, 48, 64, 96, 128)]
    return _rows(rng, np.concatenate(runs), 3000)


def power_law(rng):
    # every path of adaptive2 at once: stream, rows (257..1024), block, split
    lengths = np.minimum(rng.zipf(1.6, 4000), 12000)
    lengths[[10, 2000, 3000]] = [1024, 1025, 4097]  # the rows/block and block/split edges
    return _rows(rng, lengths, 20000)


CASES = {
    "random": lambda rng: _random(rng, 1000, 800, 0.01),
    "poisson2d": poisson2d,
    "empty-rows": empty_rows,
    "one-heavy-row": one_heavy_row,
    "few-huge-rows": few_huge_rows,
    "all-dense": all_dense,
    "lengths-1-70": lengths_1_to_70,
    "unaligned-starts": unaligned_starts,
    "medium-rows": medium_rows,
    "power-law": power_law,
    "even-lengths": even_lengths,
    "tile-edges": tile_edges,
    "tile-edges-no-empty": tile_edges_no_empty,
    "tile-edges-short": tile_edges_short,
    "block-tile-edges": block_tile_edges,
    "many-listed-rows": many_listed_rows,
    "1x1": lambda rng: sp.csr_matrix(np.array([[rng.uniform(0.5, 2)]])),
    "n-by-1": lambda rng: _random(rng, 1000, 1, 0.7),
    "1-by-n": lambda rng: _random(rng, 1, 5000, 0.9),
    "wide": lambda rng: _random(rng, 300, 2000, 0.05),
    "tall": lambda rng: _random(rng, 2000, 300, 0.05),
    "block-plus-one": lambda rng: _rows(rng, np.full(cuda_spmv.ROW_BLOCK + 1, 3), 50),
    "no-nonzeros": lambda rng: sp.csr_matrix((100, 90)),
    "no-rows": lambda rng: sp.csr_matrix((0, 10)),
}


def _device_matrix(A, dtype, index_dtype):
    return CSRMatrix.from_scipy(A, dtype=dtype, index_dtype=index_dtype).to_device()


def _reference(A_dev, x, alpha=1.0, beta=0.0, y=None):
    """float64 product of the rounded inputs, and a per-row error scale."""
    host = A_dev.to_host().to_scipy().astype(np.float64)
    x64 = cupy.asnumpy(x).astype(np.float64)
    ref = alpha * (host @ x64)
    scale = abs(alpha) * (abs(host) @ np.abs(x64))
    if y is not None and beta != 0:
        y64 = cupy.asnumpy(y).astype(np.float64)
        ref = ref + beta * y64
        scale = scale + abs(beta) * np.abs(y64)
    lengths = np.diff(host.indptr)
    return ref, scale, lengths


def _check(result, A_dev, ref, scale, lengths, what):
    got = cupy.asnumpy(result).astype(np.float64)
    assert got.shape == ref.shape, f"{what}: shape {got.shape}, expected {ref.shape}"
    bad_rows = np.flatnonzero(~np.isfinite(got))
    assert bad_rows.size == 0, f"{what}: rows {bad_rows[:10].tolist()} not finite (never written, or y read)"
    eps = np.finfo(A_dev.dtype).eps
    # Accumulated rounding grows like sqrt(terms) for random signs; 16 ulps of
    # slack per sqrt(term) stays far below any indexing mistake (an O(1) error).
    bound = 16 * eps * np.sqrt(lengths + 1.0) * scale + np.finfo(np.float64).tiny
    err = np.abs(got - ref)
    worst = int(np.argmax(err / bound)) if err.size else 0
    assert (err <= bound).all(), (f"{what}: row {worst} (nnz {lengths[worst]}) got {got[worst]!r}, "
                                  f"expected {ref[worst]!r}; {np.count_nonzero(err > bound)} rows off")


def _ids(params):
    return "-".join(np.dtype(p).name if isinstance(p, type) else str(p) for p in params)


def _runs(kernel, dtype):
    """segmented:16 exists for float32 only (test_segmented_16_refuses_float64)."""
    family, param = rules.parse_kernel(kernel)
    return family != "segmented" or param is None or param in segmented.segmented_entries(dtype)


PARAMS = [(case, dtype, index_dtype, kernel) for case in CASES for dtype in DTYPES
          for index_dtype in INDEX_DTYPES for kernel in KERNELS if _runs(kernel, dtype)]


@pytest.mark.parametrize("case,dtype,index_dtype,kernel", PARAMS, ids=[_ids(p) for p in PARAMS])
def test_kernel_matches_scipy(rng, case, dtype, index_dtype, kernel):
    A = _device_matrix(CASES[case](rng), dtype, index_dtype)
    x = cupy.asarray(rng.uniform(-1, 1, A.n_cols).astype(dtype))
    ref, scale, lengths = _reference(A, x)
    out = cupy.full(A.n_rows, np.nan, dtype=dtype)
    result = ops_spmv.spmv(A, x, kernel=kernel, out=out)
    _check(result, A, ref, scale, lengths, f"{case}/{kernel}")
    assert result is out


ALPHA_BETA_CASES = ["random", "one-heavy-row", "lengths-1-70", "empty-rows", "no-nonzeros", "power-law",
                    "tile-edges"]
AB_PARAMS = [(case, dtype, kernel) for case in ALPHA_BETA_CASES for dtype in DTYPES for kernel in KERNELS
             if _runs(kernel, dtype)]


@pytest.mark.parametrize("case,dtype,kernel", AB_PARAMS, ids=[_ids(p) for p in AB_PARAMS])
def test_alpha_beta(rng, case, dtype, kernel):
    A = _device_matrix(CASES[case](rng), dtype, np.int32)
    x = cupy.asarray(rng.uniform(-1, 1, A.n_cols).astype(dtype))
    y = cupy.asarray(rng.uniform(-1, 1, A.n_rows).astype(dtype))
    y_before = y.copy()
    alpha, beta = 2.5, -0.75
    ref, scale, lengths = _reference(A, x, alpha, beta, y)
    result = ops_spmv.spmv(A, x, y, alpha=alpha, beta=beta, kernel=kernel)
    _check(result, A, ref, scale, lengths, f"{case}/{kernel} alpha={alpha} beta={beta}")
    assert cupy.array_equal(y, y_before), "y must not be modified without out=y"
    in_place = ops_spmv.spmv(A, x, y, alpha=alpha, beta=beta, kernel=kernel, out=y)
    assert in_place is y
    _check(y, A, ref, scale, lengths, f"{case}/{kernel} in place")
    # alpha only, beta == 0 on a NaN output: y must not be read
    ref0, scale0, _ = _reference(A, x, -3.0)
    out = cupy.full(A.n_rows, np.nan, dtype=dtype)
    _check(ops_spmv.spmv(A, x, out, alpha=-3.0, beta=0.0, kernel=kernel, out=out), A, ref0, scale0, lengths,
           f"{case}/{kernel} alpha=-3 beta=0 NaN-poisoned y")


@pytest.mark.parametrize("kernel", ["scalar", "warp:2", "warp:32", "vector:4", "vector:32", "adaptive", "adaptive2",
                                    "segmented:4", "segmented:16", "staged:4"])
def test_tiny_grids_still_cover_every_row(rng, monkeypatch, kernel):
    """All kernels loop grid-stride; cap the grid at 2 blocks to prove it."""
    monkeypatch.setattr(cuda_spmv, "MAX_BLOCKS", 2)
    A = _device_matrix(few_huge_rows(rng), np.float32, np.int32)
    x = cupy.asarray(rng.uniform(-1, 1, A.n_cols).astype(np.float32))
    ref, scale, lengths = _reference(A, x)
    out = cupy.full(A.n_rows, np.nan, dtype=np.float32)
    _check(ops_spmv.spmv(A, x, kernel=kernel, out=out), A, ref, scale, lengths, f"{kernel} on a 2-block grid")


@pytest.mark.parametrize("kernel", ["adaptive", "adaptive2", "segmented", "staged:4"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_adaptive_repeats_and_new_x(rng, dtype, kernel):
    """Split rows (and segmented's and staged's rows cut by tiles) reset their completion
    counters: call after call stays right (later calls use the cached launcher)."""
    A = _device_matrix(one_heavy_row(rng), dtype, np.int32)
    for call in range(4):
        x = cupy.asarray(rng.uniform(-1, 1, A.n_cols).astype(dtype))
        ref, scale, lengths = _reference(A, x)
        _check(ops_spmv.spmv(A, x, kernel=kernel), A, ref, scale, lengths, f"{kernel} call {call}")
    assert ops_spmv.bound_launcher(A, kernel) is not None


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_adaptive2_rows_path_every_width(rng, dtype, index_dtype):
    """stream_max=16 sends rows of 17..2048 nnz to the rows path: widths 8, 16 and 32 all run."""
    lengths = np.concatenate([rng.integers(0, 17, 500), np.arange(17, 300), rng.integers(300, 2049, 40),
                              [5000, 0, 1]])
    A = _device_matrix(_rows(rng, rng.permutation(lengths), 6000), dtype, index_dtype)
    plan = adaptive.plan_for(A, stream_max=16, warp_max=2048, dense_threshold=2.0)
    widths = set(plan.blocks[plan.blocks[:, adaptive.KIND] == adaptive.KIND_ROWS, 3].tolist())
    assert widths == {8, 16, 32}
    for beta in (0.0, -0.5):
        x = cupy.asarray(rng.uniform(-1, 1, A.n_cols).astype(dtype))
        y = cupy.asarray(rng.uniform(-1, 1, A.n_rows).astype(dtype))
        ref, scale, lens = _reference(A, x, 0.5, beta, y)
        out = cupy.full(A.n_rows, np.nan, dtype=dtype) if beta == 0 else None
        result = ops_spmv.spmv_with_plan(A, x, y, alpha=0.5, beta=beta, kernel="adaptive2", row_plan=plan, out=out)
        _check(result, A, ref, scale, lens, f"adaptive2 rows path beta={beta}")


def test_adaptive_refuses_a_rows_plan(rng):

    A = _device_matrix(power_law(rng), np.float32, np.int32)
    x = cupy.ones(A.n_cols, dtype=np.float32)
    with pytest.raises(KernelError, match="adaptive2"):
        ops_spmv.spmv_with_plan(A, x, kernel="adaptive", row_plan=adaptive.plan2_for(A))


@pytest.mark.parametrize("kernel", ["scalar", "vector", "adaptive2", "segmented", "auto", "cusparse"])
def test_cached_launcher_falls_back_for_unusual_calls(rng, kernel):
    """After the first call binds a launcher, calls it does not take (strided or
    float64 x, beta != 0, a wrong-sized x or out) still get checked and right."""
    A = _device_matrix(power_law(rng), np.float32, np.int32)
    x = cupy.asarray(rng.uniform(-1, 1, A.n_cols).astype(np.float32))
    ref, scale, lengths = _reference(A, x)
    _check(ops_spmv.spmv(A, x, kernel=kernel), A, ref, scale, lengths, f"{kernel} first call")
    assert ops_spmv.bound_launcher(A, kernel) is not None
    _check(ops_spmv.spmv(A, x, kernel=kernel), A, ref, scale, lengths, f"{kernel} cached call")
    wide = cupy.zeros(2 * A.n_cols, dtype=np.float32)
    wide[::2] = x
    _check(ops_spmv.spmv(A, wide[::2], kernel=kernel), A, ref, scale, lengths, f"{kernel} strided x")
    _check(ops_spmv.spmv(A, x.astype(np.float64), kernel=kernel), A, ref, scale, lengths, f"{kernel} f64 x")
    y = cupy.asarray(rng.uniform(-1, 1, A.n_rows).astype(np.float32))
    ref_ab, scale_ab, _ = _reference(A, x, 2.0, 0.25, y)
    _check(ops_spmv.spmv(A, x, y, alpha=2.0, beta=0.25, kernel=kernel), A, ref_ab, scale_ab, lengths,
           f"{kernel} cached, beta != 0")
    ref_a, scale_a, _ = _reference(A, x, -2.0)
    _check(ops_spmv.spmv(A, x, alpha=-2.0, kernel=kernel), A, ref_a, scale_a, lengths, f"{kernel} alpha")
    with pytest.raises(InputError, match="length"):
        ops_spmv.spmv(A, cupy.ones(A.n_cols + 1, dtype=np.float32), kernel=kernel)
    with pytest.raises(InputError, match="out must be"):
        ops_spmv.spmv(A, x, kernel=kernel, out=cupy.empty(A.n_rows + 1, dtype=np.float32))


def test_spla_spmv_on_a_host_matrix_uses_the_cached_launcher(rng):
    import spla

    host = power_law(rng)
    A = CSRMatrix.from_scipy(host, dtype=np.float32)
    x = rng.uniform(-1, 1, A.n_cols).astype(np.float32)
    first = spla.spmv(A, cupy.asarray(x))
    assert ops_spmv.bound_launcher(A, "auto") is not None, "the host matrix keeps the launcher"
    second = spla.spmv(A, cupy.asarray(x))
    np.testing.assert_array_equal(cupy.asnumpy(first), cupy.asnumpy(second))
    np.testing.assert_allclose(cupy.asnumpy(second), host.astype(np.float64) @ x, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(spla.spmv(A, x), host.astype(np.float64) @ x, rtol=1e-4, atol=1e-4)  # CPU still


def _dense_panel_matrix(rng):
    """Short random rows plus 40 rows that fill 80% of columns 1000..1999."""
    A = _random(rng, 3000, 5000, 0.001).tolil()
    dense_rows = rng.choice(3000, 40, replace=False)
    for r in dense_rows:
        A.rows[r], A.data[r] = [], []  # nothing outside the dense span
        cols = 1000 + np.flatnonzero(rng.random(1000) < 0.8)
        A[r, cols] = rng.uniform(-1, 1, cols.size)
    return A.tocsr(), np.sort(dense_rows)


@pytest.mark.parametrize("use_gemv", [True, "adaptive2"], ids=["gemv", "adaptive2"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_dense_panel_rows(rng, monkeypatch, dtype, use_gemv):
    host, dense_rows = _dense_panel_matrix(rng)
    A = _device_matrix(host, dtype, np.int32)
    plan = adaptive.plan_for(A, dense_min_nnz=500, dense_threshold=0.5)
    assert plan.dense_rows.tolist() == dense_rows.tolist(), "the plan must route the 80%-dense rows to the panel"
    assert plan.summary()["paths"]["dense"]["rows"] == 40
    kernel = "adaptive2" if use_gemv == "adaptive2" else "adaptive"  # adaptive2 runs dense rows as blocks
    for beta in (0.0, 0.5):
        x = cupy.asarray(rng.uniform(-1, 1, A.n_cols).astype(dtype))
        y = cupy.asarray(rng.uniform(-1, 1, A.n_rows).astype(dtype))
        ref, scale, lengths = _reference(A, x, 1.5, beta, y)
        out = cupy.full(A.n_rows, np.nan, dtype=dtype) if beta == 0 else None
        result = ops_spmv.spmv_with_plan(A, x, y, alpha=1.5, beta=beta, kernel=kernel, row_plan=plan, out=out)
        _check(result, A, ref, scale, lengths, f"dense panel ({use_gemv}, {kernel}) beta={beta}")


def test_auto_picks_the_irregular_kernel_for_the_heavy_row(rng):
    A = _device_matrix(one_heavy_row(rng), np.float32, np.int32)
    assert rules.choose_kernel(A) == rules.AUTO_RULE["irregular"]
    poisson = _device_matrix(poisson2d(rng), np.float32, np.int32)
    assert rules.choose_kernel(poisson) == rules.AUTO_RULE["short-few-rows"]  # 1,369 rows: lanes, not a thread a row


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_near_share_of_a_device_matrix_is_the_host_copys(rng, index_dtype):
    """near_share gathers only the sampled rows' entries from the GPU: the same share as on the
    host, for scattered and near columns, and the vector width it sets runs correctly."""
    from spla.planning.stats import near_share

    scattered = _random(rng, 6000, 2_000_000, 8e-6)
    banded = sp.diags([rng.uniform(-1, 1, 6000) for _ in range(9)], list(range(-4, 5)), shape=(6000, 6000),
                      format="csr")
    for host in (scattered, banded):
        A = _device_matrix(host, np.float64, index_dtype)
        assert near_share(A) == near_share(CSRMatrix.from_scipy(host, dtype=np.float64, index_dtype=index_dtype))
    A = _device_matrix(scattered, np.float64, index_dtype)
    assert near_share(A) < rules.SCATTERED_NEAR <= near_share(_device_matrix(banded, np.float64, index_dtype))
    x = cupy.asarray(rng.uniform(-1, 1, A.n_cols))
    ref, scale, lengths = _reference(A, x)
    _check(ops_spmv.spmv(A, x, kernel="vector"), A, ref, scale, lengths, "vector on scattered rows")


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tile_span_and_lines_of_a_device_matrix_are_the_host_copys(rng, index_dtype, dtype):
    """tile_span and tile_lines sample the tiles on the GPU (the smallest and largest column, the
    distinct lines of x: a sort on the device): the same medians as on the host, and auto's packed
    rows split by them."""
    from spla.planning.stats import tile_lines, tile_span

    scattered = _random(rng, 20_000, 2_000_000, 4e-6)
    banded = sp.diags([rng.uniform(-1, 1, 20_000) for _ in range(9)], [-3000, -900, -40, -3, 0, 5, 77, 800, 2500],
                      shape=(20_000, 20_000), format="csr")
    for host in (scattered, banded):
        A = _device_matrix(host, dtype, index_dtype)
        on_host = CSRMatrix.from_scipy(host, dtype=dtype, index_dtype=index_dtype)
        assert (tile_span(A), tile_lines(A)) == (tile_span(on_host), tile_lines(on_host))
    assert tile_span(_device_matrix(banded, dtype, index_dtype)) < rules.AUTO.packed_span
    assert tile_span(_device_matrix(scattered, dtype, index_dtype)) > rules.AUTO.packed_span
    assert tile_lines(_device_matrix(banded, dtype, index_dtype)) < rules.AUTO.packed_lines
    assert tile_lines(_device_matrix(scattered, dtype, index_dtype)) > rules.AUTO.packed_lines


@pytest.mark.parametrize("one_launch_cut", [0, 10**9], ids=["finish-launch", "one-launch"])
@pytest.mark.parametrize("case", ["one-heavy-row", "few-huge-rows", "power-law", "tile-edges", "block-tile-edges",
                                  "many-listed-rows", "even-lengths"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_staged_finishes_cut_rows_either_way(rng, monkeypatch, dtype, case, one_launch_cut):
    """Rows cut by staged's tiles are finished by its second launch, or in the kernel itself (a
    counter a cut row, STAGED_ONE_LAUNCH_CUT), with alpha and beta; calls after the first (the
    counters reset by the warps that finished their rows) give the same bits."""
    monkeypatch.setattr(segmented, "STAGED_ONE_LAUNCH_CUT", one_launch_cut)
    A = _device_matrix(CASES[case](rng), dtype, np.int32)
    x = cupy.asarray(rng.uniform(-1, 1, A.n_cols).astype(dtype))
    y = cupy.asarray(rng.uniform(-1, 1, A.n_rows).astype(dtype))
    ref, scale, lengths = _reference(A, x, 1.5, -0.5, y)
    first = ops_spmv.spmv(A, x, y, alpha=1.5, beta=-0.5, kernel="staged:4")
    assert ops_spmv.bound_launcher(A, "staged:4").one_launch == (one_launch_cut > 0)
    _check(first, A, ref, scale, lengths, f"{case}/staged:4 ({'one launch' if one_launch_cut else 'finish launch'})")
    for _ in range(3):
        assert cupy.array_equal(ops_spmv.spmv(A, x, y, alpha=1.5, beta=-0.5, kernel="staged:4"), first)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_staged_one_launch_over_many_cut_rows(rng, monkeypatch, dtype):
    """Thousands of cut rows, some over many tiles, finished by their counters in one launch
    (as STAGED_ONE_LAUNCH_CUT lets it), on a grid looping over the tiles; call after call."""
    from spla.io import generators

    monkeypatch.setattr(segmented, "STAGED_ONE_LAUNCH_CUT", 10**9)
    monkeypatch.setattr(cuda_spmv, "MAX_BLOCKS", 700)
    A = generators.powerlaw(150_000, 12.0, seed=5).astype(dtype).to_device()
    cut = segmented.staged_cut_rows(A, segmented.STAGED_THREADS * 4)
    assert len(cut) > 1000 and (cut[:, 2] - cut[:, 1]).max() > 2
    x = cupy.asarray(rng.uniform(-1, 1, A.n_cols).astype(dtype))
    ref, scale, lengths = _reference(A, x)
    first = None
    for call in range(3):
        out = cupy.full(A.n_rows, np.nan, dtype=dtype)
        _check(ops_spmv.spmv(A, x, kernel="staged:4", out=out), A, ref, scale, lengths, f"one launch, call {call}")
        assert first is None or cupy.array_equal(out, first)
        first = out
    assert ops_spmv.bound_launcher(A, "staged:4").one_launch


@pytest.mark.parametrize("case", ["few-huge-rows", "power-law", "block-tile-edges"])
def test_staged_one_launch_gives_the_finish_launchs_bits(rng, monkeypatch, case):
    """Both ways add a cut row's partials in the same order (spla::finish_cut_row in
    kernels/common.cuh): the same bits."""
    host = CASES[case](rng)
    x = cupy.asarray(rng.uniform(-1, 1, host.shape[1]).astype(np.float32))
    results = []
    for one_launch_cut in (0, 10**9):
        monkeypatch.setattr(segmented, "STAGED_ONE_LAUNCH_CUT", one_launch_cut)
        A = _device_matrix(host, np.float32, np.int32)  # a copy of its own: the mode is fixed when it binds
        results.append(ops_spmv.spmv(A, x, kernel="staged:4"))
        assert ops_spmv.bound_launcher(A, "staged:4").one_launch == (one_launch_cut > 0)
    assert cupy.array_equal(*results)


def span_edge(rng):
    """Every tile of staged:4 (1,024 nonzeros, rows of 16) spans exactly 65,535 columns, the most
    a 2-byte offset holds: its first entry at the tile's smallest column, its last at the largest."""
    tile, n_tiles = segmented.STAGED_THREADS * 4, 40
    starts = np.arange(n_tiles) * 3000
    cols = starts[:, None] + rng.integers(0, segmented.NARROW_SPAN, (n_tiles, tile))
    cols[:, 0], cols[:, -1] = starts, starts + segmented.NARROW_SPAN - 1
    indptr = np.arange(0, n_tiles * tile + 1, 16)
    return sp.csr_matrix((rng.uniform(-1, 1, n_tiles * tile), cols.ravel(), indptr),
                         shape=(indptr.size - 1, starts[-1] + segmented.NARROW_SPAN))


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64], ids=["int32", "int64"])
@pytest.mark.parametrize("case", ["span-edge", "power-law", "block-tile-edges", "many-listed-rows"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_staged_narrow_columns_give_the_indices_bits(rng, monkeypatch, dtype, case, index_dtype):
    """Where every tile spans fewer than 65,536 columns, staged reads 2-byte offsets from each
    tile's first column (its narrow entry): the same products in the same order as from the
    indices, so the same bits, with alpha and beta, call after call."""
    host = span_edge(rng) if case == "span-edge" else CASES[case](rng)
    x = cupy.asarray(rng.uniform(-1, 1, host.shape[1]).astype(dtype))
    y = cupy.asarray(rng.uniform(-1, 1, host.shape[0]).astype(dtype))
    results = []
    for narrow in (False, True):
        monkeypatch.setattr(segmented, "STAGED_NARROW", ("float32", "float64") if narrow else ())
        A = _device_matrix(host, dtype, index_dtype)  # a copy of its own: the entry is fixed when it binds
        results.append(ops_spmv.spmv(A, x, y, alpha=1.5, beta=-0.5, kernel="staged:4"))
        assert ops_spmv.bound_launcher(A, "staged:4").entry == ("_narrow" if narrow else "")
    ref, scale, lengths = _reference(A, x, 1.5, -0.5, y)
    _check(results[1], A, ref, scale, lengths, f"{case}/staged:4 narrow")
    assert cupy.array_equal(*results)
    assert cupy.array_equal(ops_spmv.spmv(A, x, y, alpha=1.5, beta=-0.5, kernel="staged:4"), results[1])


# How staged may read a matrix's values (segmented's switch, the entry's suffix), and values that take it
STAGED_VALUES = {
    "ones": ("STAGED_UNIFORM", "_uniform", lambda rng, n: np.full(n, 1.0)),
    "one-value": ("STAGED_UNIFORM", "_uniform", lambda rng, n: np.full(n, -2.5)),
    # 200 bit patterns, some of which the detection's sample misses
    "palette": ("STAGED_PALETTE", "_palette", lambda rng, n: rng.choice(rng.standard_normal(200), n)),
}


@pytest.mark.parametrize("launches", ["one", "two"])
@pytest.mark.parametrize("narrow", [False, True], ids=["indices", "narrow"])
@pytest.mark.parametrize("values", list(STAGED_VALUES))
@pytest.mark.parametrize("case", ["span-edge", "power-law", "block-tile-edges", "many-listed-rows", "even-lengths"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_staged_reads_one_value_once_or_a_palette_with_the_same_bits(rng, monkeypatch, dtype, case, values, narrow,
                                                                     launches):
    """Every stored value the same: staged's _uniform entries read it once; values of 200 bit
    patterns: its _palette entries read a code a nonzero (found on the GPU). Either gives the bits of
    the entries that read every value (from the indices and from narrow offsets, in one launch and
    with the finish kernel), with alpha and beta, call after call."""
    switch, entry, make = STAGED_VALUES[values]
    host = span_edge(rng) if case == "span-edge" else CASES[case](rng)
    host = sp.csr_matrix((make(rng, host.nnz), host.indices, host.indptr), shape=host.shape)
    x = cupy.asarray(rng.uniform(-1, 1, host.shape[1]).astype(dtype))
    y = cupy.asarray(rng.uniform(-1, 1, host.shape[0]).astype(dtype))
    monkeypatch.setattr(segmented, "STAGED_NARROW", ("float32", "float64") if narrow else ())
    monkeypatch.setattr(segmented, "STAGED_ONE_LAUNCH_CUT", 10**9 if launches == "one" else -1)
    monkeypatch.setattr(segmented, "STAGED_PALETTE_MIN_BYTES", 0)  # (from 90 MB a call touches otherwise)
    for other in ("STAGED_UNIFORM", "STAGED_PALETTE"):  # the entries that read every value, but for the one tried
        monkeypatch.setattr(segmented, other, ())
    results = []
    for on in (False, True):
        monkeypatch.setattr(segmented, switch, ("float32", "float64") if on else ())
        A = _device_matrix(host, dtype, np.int32)  # a copy of its own: the entry is fixed when it binds
        results.append(ops_spmv.spmv(A, x, y, alpha=1.5, beta=-0.5, kernel="staged:4"))
        launcher = ops_spmv.bound_launcher(A, "staged:4")
        assert launcher.entry.endswith(entry) == on and (launcher.finish is None) == (launches == "one")
    if values == "palette":
        assert segmented.staged_palette(A).n_values == np.unique(A.data.get()).size <= 200
    ref, scale, lengths = _reference(A, x, 1.5, -0.5, y)
    _check(results[1], A, ref, scale, lengths, f"{case}/staged:4 {values}")
    assert cupy.array_equal(*results)
    assert cupy.array_equal(ops_spmv.spmv(A, x, y, alpha=1.5, beta=-0.5, kernel="staged:4"), results[1])


def test_spla_info_says_staged_reads_a_palette(rng, monkeypatch):
    """spla info's plan of auto's staged names the palette of a device matrix (the launcher's choice)."""
    from spla import analysis

    monkeypatch.setattr(analysis, "choose_kernel", lambda A: "staged")
    monkeypatch.setattr(segmented, "STAGED_PALETTE_MIN_BYTES", 0)
    host = CASES["power-law"](rng)
    host = sp.csr_matrix((rng.choice([2.0, -1.0, 0.25, 8.0, 3.0], host.nnz), host.indices, host.indptr),
                         shape=host.shape)
    A = _device_matrix(host, np.float64, np.int32)
    unit = analysis.analyze(A)["mappings"]["auto"]["unit"]
    assert "; values read as a byte each, codes for their 5 distinct values" in unit
    assert "a byte each" not in analysis.analyze(A.astype(np.float32))["mappings"]["auto"]["unit"]  # float64 alone


def test_staged_reads_every_value_where_one_differs(rng):
    """One value that differs (in the last tile, or -0.0 beside 0.0) keeps the entries that read
    every value, and the right result."""
    host = CASES["power-law"](rng)
    for last in (2.0, -0.0):
        values = np.full(host.nnz, 0.0 if last == -0.0 else 1.0)
        values[-1] = last
        A = _device_matrix(sp.csr_matrix((values, host.indices, host.indptr), shape=host.shape), np.float32,
                           np.int32)
        x = cupy.asarray(rng.uniform(-1, 1, host.shape[1]).astype(np.float32))
        result = ops_spmv.spmv(A, x, kernel="staged:4")
        assert not ops_spmv.bound_launcher(A, "staged:4").entry.endswith("_uniform")
        ref, scale, lengths = _reference(A, x)
        _check(result, A, ref, scale, lengths, f"last value {last}")


def test_auto_runs_staged_on_a_large_power_law(rng):
    """From AUTO.large_nnz nonzeros an irregular matrix runs staged (and its finish kernel)
    through spla.spmv's auto, with alpha/beta and out= as every kernel; describe_choice says so."""
    from spla.io import generators

    host = generators.powerlaw(rules.AUTO.large_nnz // 7, 8.0, seed=3)
    assert host.nnz >= rules.AUTO.large_nnz
    A = host.astype(np.float32).to_device()
    assert rules.describe_choice(A)["class"] == "irregular-large" and rules.choose_kernel(A) == "staged"
    x = cupy.asarray(rng.uniform(-1, 1, A.n_cols).astype(np.float32))
    y = cupy.asarray(rng.uniform(-1, 1, A.n_rows).astype(np.float32))
    ref, scale, lengths = _reference(A, x, 0.5, 2.0, y)
    out = cupy.full(A.n_rows, np.nan, dtype=np.float32)
    result = ops_spmv.spmv(A, x, y, alpha=0.5, beta=2.0, out=out)
    assert result is out
    _check(result, A, ref, scale, lengths, "auto -> staged")


def test_public_api_and_matmul(rng):
    import spla

    host = _random(rng, 500, 400, 0.02)
    A = CSRMatrix.from_scipy(host, dtype=np.float32)
    x = rng.uniform(-1, 1, 400).astype(np.float32)
    got = spla.spmv(A, cupy.asarray(x))
    assert isinstance(got, cupy.ndarray)
    np.testing.assert_allclose(cupy.asnumpy(got), host.astype(np.float64) @ x, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(cupy.asnumpy(A @ cupy.asarray(x)), cupy.asnumpy(got), rtol=0, atol=0)


def test_bad_arguments_fail_loudly(rng):

    A = _device_matrix(_random(rng, 50, 40, 0.1), np.float32, np.int32)
    x = cupy.ones(40, dtype=np.float32)
    with pytest.raises(KernelError, match="unknown SpMV kernel"):
        ops_spmv.spmv(A, x, kernel="fast")
    with pytest.raises(InputError, match="length 40"):
        ops_spmv.spmv(A, cupy.ones(41, dtype=np.float32))
    with pytest.raises(InputError, match="needs y"):
        ops_spmv.spmv(A, x, beta=1.0)
    other = adaptive.plan_for(_device_matrix(_random(rng, 60, 40, 0.1), np.float32, np.int32))
    with pytest.raises(KernelError, match="plan was built"):
        ops_spmv.spmv_with_plan(A, x, kernel="adaptive", row_plan=other)
    # arrays that start 4 bytes into an allocation: vector's packs would straddle 16-byte lines
    misaligned = CSRMatrix(A.data[1:], A.indices[1:], cupy.asarray([0, A.nnz - 1]), (1, 40), validate=False)
    with pytest.raises(KernelError, match="16-byte boundary"):
        ops_spmv.spmv(misaligned, x, kernel="vector")
    # segmented takes single loads where its 16-byte ones would be misaligned (x is ones: y = row sum)
    got = cupy.asnumpy(ops_spmv.spmv(misaligned, x, kernel="segmented"))
    values = cupy.asnumpy(misaligned.data).astype(np.float64)
    np.testing.assert_allclose(got, [values.sum()], rtol=0, atol=1e-6 * np.abs(values).sum())
    # auto picks vector for that one medium row, and runs warp's single loads there instead
    assert rules.rule_kernel(misaligned) == "vector"
    got = cupy.asnumpy(ops_spmv.spmv(misaligned, x))
    np.testing.assert_allclose(got, [values.sum()], rtol=0, atol=1e-6 * np.abs(values).sum())


@pytest.mark.parametrize("kernel", ["segmented", "staged:4"])
@pytest.mark.parametrize("dtype,index_dtype", [(np.float32, np.int32), (np.float64, np.int64)])
@pytest.mark.parametrize("with_empty_rows", [False, True])
def test_tiles_on_misaligned_arrays(rng, dtype, index_dtype, with_empty_rows, kernel):
    """Views one entry into their allocations: segmented's whole tiles take its single-load path
    (staged loads single entries everywhere)."""
    lengths = rng.integers(0 if with_empty_rows else 1, 40, 600)
    host = _rows(rng, lengths, 900)
    A = _device_matrix(host, dtype, index_dtype)
    data = cupy.concatenate([cupy.zeros(1, dtype), A.data])[1:]
    indices = cupy.concatenate([cupy.zeros(1, index_dtype), A.indices])[1:]
    assert data.data.ptr % 16 and indices.data.ptr % 16
    shifted = CSRMatrix(data, indices, A.indptr, A.shape, validate=False)
    x = cupy.asarray(rng.uniform(-1, 1, A.n_cols).astype(dtype))
    ref, scale, lengths = _reference(A, x)
    _check(ops_spmv.spmv(shifted, x, kernel=kernel), A, ref, scale, lengths, f"misaligned {kernel}")


def test_segmented_16_refuses_float64(rng):
    A = _device_matrix(_random(rng, 50, 40, 0.1), np.float64, np.int32)
    x = cupy.ones(40, dtype=np.float64)
    with pytest.raises(KernelError, match="float32 only"):
        ops_spmv.spmv(A, x, kernel="segmented:16")
    assert segmented.segmented_entries(np.float64) == (4, 8)
    assert segmented.segmented_entries(np.float32) == segmented.SEGMENTED_ENTRIES


@pytest.mark.parametrize("kernel", ["segmented", "staged:4", "staged:16"])
@pytest.mark.parametrize("case", ["one-heavy-row", "power-law", "tile-edges", "block-tile-edges", "many-listed-rows"])
def test_tiles_give_the_same_bits_every_call(rng, case, kernel):
    """Rows cut by tiles are summed in tile order, never by float atomics."""
    A = _device_matrix(CASES[case](rng), np.float32, np.int32)
    x = cupy.asarray(rng.uniform(-1, 1, A.n_cols).astype(np.float32))
    first = ops_spmv.spmv(A, x, kernel=kernel)
    for _ in range(5):
        assert cupy.array_equal(ops_spmv.spmv(A, x, kernel=kernel), first)


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("case", ["random", "one-heavy-row", "empty-rows", "block-tile-edges", "1-by-n", "wide"])
def test_blocked_over_several_blocks_matches_scipy(rng, monkeypatch, case, dtype, index_dtype):
    """blocked with blocks of 97 columns (a 2M-column block is one block on these matrices): the
    regrouping on the GPU (CuPy's sort) and the sum of each row's blocks, with alpha and beta."""
    monkeypatch.setattr(blocked, "BLOCK_COLUMNS", 97)
    A = _device_matrix(CASES[case](rng), dtype, index_dtype)
    x = cupy.asarray(rng.uniform(-1, 1, A.n_cols).astype(dtype))
    y = cupy.asarray(rng.uniform(-1, 1, A.n_rows).astype(dtype))
    ref, scale, lengths = _reference(A, x, 2.0, -0.5, y)
    _check(ops_spmv.spmv(A, x, y, alpha=2.0, beta=-0.5, kernel="blocked"), A, ref, scale, lengths, f"{case}/blocked")
    assert blocked.regrouped(A).matrix.n_rows > A.n_rows - int((np.diff(A.to_host().indptr) == 0).sum())


def test_auto_blocks_a_short_wide_matrix_on_the_gpu(rng, small_l2):
    """A device matrix of rows drawn from scattered columns that many rows read, over an x past auto's
    cut, runs blocked by auto, with SciPy's product; the traffic model read from the GPU's arrays
    (CuPy's sort, search and scatter) counts what it counts on the host copy."""
    n_cols = -(-rules.AUTO.blocked_x_bytes // 4)
    host = short_wide(rng, 600, 12, n_cols, pool=3000)
    A = CSRMatrix(cupy.asarray(host.data), cupy.asarray(host.indices), cupy.asarray(host.indptr), host.shape)
    assert "host" not in A._cache  # (the model reads A's own side: here the GPU's arrays)
    assert blocked.traffic(A) == blocked.traffic(host)
    assert rules.describe_choice(A)["kernel"] == "blocked"
    x = cupy.asarray(rng.uniform(-1, 1, n_cols).astype(np.float32))
    ref, scale, lengths = _reference(A, x)
    _check(ops_spmv.spmv(A, x), A, ref, scale, lengths, "auto on a short-wide matrix")
    assert ops_spmv.bound_launcher(A, "auto") is not None


def test_auto_runs_staged_where_blocked_partials_do_not_fit(rng, monkeypatch):
    """auto's blocked whose launcher (the partials, staged's tile state) does not fit beside A and its
    copy binds staged instead, drops the copy and gives SciPy's product; blocked asked for by name
    raises the memory error."""
    monkeypatch.setattr(blocked, "BLOCK_COLUMNS", 97)

    def out_of_memory(*args):
        raise MemoryError("no room for the partials")

    monkeypatch.setattr(cuda_spmv, "_BlockedLauncher", out_of_memory)
    A = _device_matrix(CASES["random"](rng), np.float32, np.int32)
    A._cache[rules.AUTO_CHOICE_KEY] = "blocked:8"  # as if the rule or a tuning had picked it
    x = cupy.asarray(rng.uniform(-1, 1, A.n_cols).astype(np.float32))
    ref, scale, lengths = _reference(A, x)
    _check(ops_spmv.spmv(A, x), A, ref, scale, lengths, "auto without blocked's partials")
    assert isinstance(ops_spmv.bound_launcher(A, "auto"), cuda_spmv._StagedLauncher)
    assert blocked.REGROUPED_KEY not in A._cache
    with pytest.raises(MemoryError):
        ops_spmv.spmv(A, x, kernel="blocked")
