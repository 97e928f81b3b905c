"""SpMM planning on the host: partitions, launch shapes, the auto rule, fused tables, panel engines."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from spla.errors import KernelError
from spla.io import generators
from spla.planning import adaptive as planner
from spla.planning import gemm as G
from spla.planning import spmm as P


# ------------------------------------------------------- host-side scheduling
def _assert_partition(n_rows, groups, long_rows, dense_rows):
    every = np.concatenate([g.rows for g in groups] + [long_rows, np.asarray(dense_rows, np.int64)])
    assert np.array_equal(np.sort(every), np.arange(n_rows)), "each row exactly once"


def test_split_rows_partitions_with_duplicates_and_gaps(rng):
    lengths = rng.integers(0, 3000, 500)
    lengths[:50] = 0
    bins = [("a", rng.choice(500, 200)), ("b", rng.choice(500, 300))]  # overlapping, with gaps
    dense = rng.choice(500, 20, replace=False)
    groups, long_rows = P.split_rows(lengths, bins, dense)
    _assert_partition(500, groups, long_rows, dense)
    assert not np.intersect1d(long_rows, dense).size
    assert np.all(lengths[long_rows] > P.SEGMENT_NNZ)
    for g in groups:
        assert g.max_length <= P.SEGMENT_NNZ
        if g.max_length <= P.LENGTH_CLASSES[-1]:
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
    groups, long_rows = P.split_rows(lengths, bins, plan.dense_rows)
    _assert_partition(A.n_rows, groups, long_rows, plan.dense_rows)
    assert {g.name.split("<")[0].split(">")[0] for g in groups} <= {"stream", "block", "split", "rest"}
    # without the dense path the same rows become long rows, cut into segments
    groups, long_rows = P.split_rows(lengths, [(b.name, b.rows) for b in plan.bins], [])
    _assert_partition(A.n_rows, groups, long_rows, [])
    assert set(plan.dense_rows) <= set(long_rows)


def test_segment_ranges_cover_long_rows(rng):
    lengths = rng.integers(0, 5000, 40)
    indptr = np.concatenate(([0], np.cumsum(lengths)))
    long_rows = np.flatnonzero(lengths > 1024)
    row, begin, end = P.segment_ranges(indptr, long_rows, 1000)
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
        cl, j, tiles = P.warp_shape(k, vec)
        assert cl in P.WARP_CL and (j == 1 or cl == 32)
        assert cl * vec * j * tiles >= k > cl * vec * j * (tiles - 1)
        if j == 1 and cl > 1:
            assert cl // 2 * vec < k, "a narrower lane group would have covered k"
    with pytest.raises(KernelError, match="grid.y"):
        P.warp_shape(10**8, 1)


def test_regk_vector_width_matches_header_rule():
    assert [P.regk_vector_width(4, K) for K in P.REGK_K] == [1, 2, 4, 4, 4]
    assert [P.regk_vector_width(8, K) for K in P.REGK_K] == [1, 2, 2, 2, 2]
    assert [P.regk_sub(m) for m in (0, 5, 8, 9, 16, 30, 64, 500)] == [1, 1, 1, 2, 2, 4, 8, 8]


def test_auto_policy():
    scattered = generators.from_spec("gen:random:4096:5")
    assert P.choose_kernel(scattered, 1) == "spmv-loop"
    # 4,096 float64 rows of 5 scattered nonzeros: at k <= 16 (8 lanes a row at most) too few threads for
    # subwarp's groups to fill the GPU, and too few rows for regk's, so a warp a row; from k = 17 (16 lanes,
    # 32 at k = 64) enough
    assert [P.choose_kernel(scattered, k) for k in (2, 8, 12, 16, 17, 64)] == ["warp"] * 4 + ["subwarp"] * 2
    banded = generators.from_spec("gen:banded:3000:40")  # 81 nnz per row: a warp per row
    assert P.choose_kernel(banded, 8) == "warp"
    huge = generators.from_spec("gen:hugerows:20000:3:5000")
    assert P.choose_kernel(huge, 8) == "fused"
    assert P.choose_kernel(huge, 16) == "fused"
    assert P.choose_kernel(huge, 17) == "adaptive", "past 16 fused needs k a multiple of a 16-byte vector"
    assert [P.choose_kernel(huge, k) for k in (20, 32, 64)] == ["fused"] * 3
    assert P.choose_kernel(huge, 128) == ("fused" if huge.dtype == np.float32 else "adaptive")


def test_fused_segments_are_short_on_small_matrices(monkeypatch):
    """fused cuts long rows into segments of 256 below 2^22 nonzeros and of 1,024 from there; fused:N
    and segment_nnz= pin a length."""
    small = generators.from_spec("gen:hugerows:20000:3:5000")
    assert small.nnz < P.SHORT_SEGMENTS_MAX_NNZ
    assert P.plan_spmm(small, 8, "fused").schedule.segment_nnz == 256
    assert P.plan_spmm(small, 8).schedule.segment_nnz == 256  # auto runs fused here
    assert P.plan_spmm(small, 8, "fused:1024").schedule.segment_nnz == 1024
    assert P.plan_spmm(small, 8, "fused", segment_nnz=512).schedule.segment_nnz == 512
    monkeypatch.setattr(P, "SHORT_SEGMENTS_MAX_NNZ", small.nnz)  # the same matrix read as large
    fresh = generators.from_spec("gen:hugerows:20000:3:5000")
    assert P.plan_spmm(fresh, 8, "fused").schedule.segment_nnz == P.SEGMENT_NNZ == 1024
    assert [P.fused_segment_nnz(n) for n in (small.nnz - 1, small.nnz)] == [256, 1024]


def test_short_rows_run_subwarp_from_enough_threads():
    """subwarp gives a row CL lanes (k in 16-byte vectors: 2 at float32 k = 8, 8 at k = 32, 4 at float64
    k = 8); below SUBWARP_MIN_THREADS of them auto runs warp, or regk up to REGK_SMALL_K columns from
    REGK_MIN_ROWS rows where no row is longer than 64."""
    cut = P.SUBWARP_MIN_THREADS
    for k, dtype, lanes, fewer in ((8, np.float32, 2, "warp"), (32, np.float32, 8, "warp"),
                                   (8, np.float64, 4, "warp"), (3, np.float32, 1, "regk"),
                                   (4, np.float64, 2, "regk"), (5, np.float32, 2, "warp")):
        assert P.subwarp_threads(1000, k, dtype) == 1000 * lanes
        rows = cut // lanes
        assert P.choose_from_stats(6.0, 12, k, dtype, rows) == "subwarp"
        assert P.choose_from_stats(6.0, 12, k, dtype, rows - 1) == fewer
    # regk needs REGK_MIN_ROWS rows, and its lanes a row follow the mean: a row of 65 or more (bimodal
    # rows) runs warp
    assert P.choose_from_stats(16.0, 64, 4, np.float32, P.REGK_MIN_ROWS) == "regk"
    assert P.choose_from_stats(16.0, 64, 4, np.float32, P.REGK_MIN_ROWS - 1) == "warp"
    assert P.choose_from_stats(16.0, 65, 4, np.float32, 9000) == "warp"
    assert P.choose_from_stats(6.0, 12, 8) == "subwarp"  # no row count: read as large
    assert P.choose_from_stats(100.0, 150, 8, np.float32, 10**7) == "warp"  # long rows, any size


def test_auto_runs_dia_where_the_diagonals_are_and_rows_enough():
    """SpMM's rule runs dia on a matrix whose entries lie on a few diagonals, from DIA_ROWS_PER_MEAN rows a
    nonzero of the mean row and up to DIA_MAX_K columns (past it, subwarp), whatever the SpMV runs there (its
    rule's choice or a tuned one); fewer rows run warp or regk; one column stays an SpMV."""
    from spla.planning import spmv, tune

    large = generators.from_spec("gen:poisson2d:256")  # 65,536 rows: the SpMV rule's dia too
    assert spmv.choose_kernel(large) == "dia"
    assert [P.choose_kernel(large, k) for k in (1, 2, 8, 16, 17, 64)] == ["spmv-loop", "dia", "dia", "dia",
                                                                           "subwarp", "subwarp"]
    assert P.plan_spmm(large, 8).kernel == "dia"
    tune.set_choice(large, "scalar", "measured")
    assert P.choose_kernel(large, 8) == "dia"

    def floor(A):  # the rows dia needs on A
        return P.DIA_ROWS_PER_MEAN * A.nnz / A.n_rows

    # short rows need few: 1,600 rows of 4.9 nonzeros clear 250 x 4.9 = 1,225, 900 rows do not
    middling = generators.from_spec("gen:poisson2d:40")
    assert spmv.choose_kernel(middling) != "dia" and middling.n_rows >= floor(middling)
    assert P.choose_kernel(middling, 8) == "dia"
    small = generators.from_spec("gen:poisson2d:30")  # a thread a row leaves the GPU idle
    tune.set_choice(small, "dia:1", "measured")
    assert small.n_rows < floor(small) and P.choose_kernel(small, 8) == "warp"
    # long rows need more: a band of 25 a row runs dia from 6,250 rows, not on 6,000
    assert P.choose_kernel(generators.from_spec("gen:banded:6000:12"), 8) == "warp"
    assert P.choose_kernel(generators.from_spec("gen:banded:6400:12"), 8) == "dia"
    scattered = generators.from_spec("gen:random:20000:5")  # rows enough, no diagonals
    assert P.choose_kernel(scattered, 8) == "subwarp"


def test_auto_runs_regk_on_long_diagonal_rows_at_few_columns():
    """Where the rule would run dia, rows of a mean of DIA_REGK_MIN_MEAN or more at k <=
    REGK_SMALL_K run regk up to DIA_REGK_MAX_ROWS rows: dia's thread a row walks each long row alone."""
    band = generators.from_spec("gen:banded:16000:19")  # 39 a row
    assert [P.choose_kernel(band, k) for k in (2, 3, 4, 8, 16)] == ["regk"] * 3 + ["dia"] * 2
    assert P.choose_kernel(generators.from_spec(f"gen:banded:{P.DIA_REGK_MAX_ROWS}:19"), 2) == "regk"
    assert P.choose_kernel(generators.from_spec(f"gen:banded:{P.DIA_REGK_MAX_ROWS + 1}:19"), 2) == "dia"
    short = generators.from_spec("gen:banded:16000:9")  # 19 a row: under DIA_REGK_MIN_MEAN
    assert P.choose_kernel(short, 2) == "dia"
    assert P.choose_kernel(generators.from_spec("gen:banded:16000:10"), 2) == "regk"  # 21 a row


# ------------------------------------------------------- fused schedule (host side)
@pytest.mark.parametrize("nnz_per_lane", [8, 16])
def test_fused_partition_places_every_row_once(rng, nnz_per_lane):
    lengths = np.concatenate([rng.integers(0, 40, 3000), rng.integers(40, 3000, 200), [0, 0, 5000, 1024, 1025]])
    rng.shuffle(lengths)
    excluded = rng.choice(lengths.size, 17, replace=False)
    classes, long_rows = P.fused_partition(lengths, excluded, nnz_per_lane=nnz_per_lane)
    placed = np.concatenate([rows for _, rows in classes] + [long_rows, excluded])
    assert np.array_equal(np.sort(placed), np.arange(lengths.size)), "every row exactly once"
    assert np.all(lengths[long_rows] > P.SEGMENT_NNZ)
    kinds = [kind for kind, _ in classes]
    assert kinds == [k for k in P.FUSED_LAUNCH_ORDER if k in kinds], "longest work first"
    for kind, rows in classes:
        assert np.all(np.diff(rows) > 0), "rows ascending within a class (neighbouring output rows)"
        lens = lengths[rows]
        assert np.all(lens <= max(nnz_per_lane * kind, 0) if kind < 32 else lens <= P.SEGMENT_NNZ)
        if kind > 1:
            assert np.all(lens > nnz_per_lane * kind // 2), "a narrower group would have fit"
        assert all(P.fused_sub(int(n), nnz_per_lane) == kind for n in lens[:50])


def test_fused_table_block_ranges():
    classes = [(32, np.arange(9)), (4, np.arange(100, 200)), (1, np.arange(1000, 1300))]
    table, row_list, n_blocks = P.fused_table(classes, n_segments=20)
    per_block = {P.FUSED_KIND_SEGMENT: 8, 32: 8, 4: 64, 1: 256}
    assert table[:, 1].tolist() == [P.FUSED_KIND_SEGMENT, 32, 4, 1]
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


@pytest.mark.parametrize("sms", [132, 78])
def test_dense_panel_engine_rule(sms):
    assert P.dense_gemm_kernel(2000, 8, np.float64, 100_000, sms) == "cublas"  # the GEMM core is float32-only
    # few 128 x 128 tiles, no column count: cuBLAS; enough tiles to fill the SMs: dbuf
    assert P.dense_gemm_kernel(2000, 8, np.float32, None, sms) == "cublas"
    assert P.dense_gemm_kernel(128 * sms, 128, np.float32, None, sms) == "dbuf"
    # the hybrid benchmark's panel (2,000 rows x 100k columns): the GEMM rule itself when it picks split-K
    for k in (8, 32):
        choice = G.auto_kernel(np.float32, (2000, k, 100_000), sms)
        expected = "auto" if "split" in choice else ("dbuf" if -(-2000 // 128) * -(-k // 128) >= sms else "cublas")
        assert P.dense_gemm_kernel(2000, k, np.float32, 100_000, sms) == expected


def test_panel_plans_follow_the_engine(rng):
    panel = P.DensePanel(np.arange(40), 8, 1032, 9000)
    (plan,) = P.panel_plans([panel], 8, np.float32, multiprocessors=132)
    assert (plan.M, plan.N) == (40, 8) and plan.K == 1024 and plan.name == "splitk_n8"
    (forced,) = P.panel_plans([panel], 8, np.float32, dense_gemm="cublas")
    assert forced.name == "cublas"
    (fp64,) = P.panel_plans([panel], 8, np.float64)
    assert fp64.name == "cublas"
    with pytest.raises(KernelError, match="float32 only"):
        P.panel_plans([panel], 8, np.float64, dense_gemm="dbuf")


@pytest.mark.parametrize("span, n_cols, want", [((3, 9), 100, (3, 11)), ((97, 100), 100, (96, 100)),
                                                 ((0, 3), 3, (0, 3)), ((4, 8), 8, (4, 8))])
def test_widened_panel_stays_inside_the_matrix(span, n_cols, want):
    class Panel:
        rows, col_begin, col_end, nnz = np.arange(3), span[0], span[1], 5
    wide = P.widened_panel(Panel, n_cols)
    assert (wide.col_begin, wide.col_end) == want
    assert wide.col_begin <= span[0] and wide.col_end >= span[1] and wide.col_end <= max(n_cols, span[1])


def test_plans_are_immutable_and_resolve_auto():
    A = generators.from_spec("gen:hugerows:20000:3:5000")
    plan = P.plan_spmm(A, 8)
    assert plan.kernel == "fused" and plan.requested == "auto" and plan.schedule is not None
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.kernel = "warp"
    assert P.plan_spmm(A, 8) .key == plan.key, "schedules are cached on the matrix"
    assert P.plan_spmm(A, 17, "fused").kernel == "adaptive", "past 16 fused needs k a multiple of a vector"
    assert P.plan_spmm(A, 32, "fused").kernel == "fused" and P.fused_wide_lanes(32, A.dtype) == 32 // (16 // 8)
    assert P.plan_spmm(A, 66, "fused").kernel == "adaptive", "a warp holds 32 vectors: 64 float64 columns"
    assert P.plan_spmm(A, 8, "fused", dense=False).schedule.key != plan.schedule.key
    poisson = generators.from_spec("gen:poisson2d:32")
    assert P.plan_spmm(poisson, 4).regk_sub == P.regk_sub(poisson.nnz / poisson.n_rows)
    with pytest.raises(KernelError, match="at most 16"):
        P.plan_spmm(poisson, 17, "regk")
    with pytest.raises(KernelError, match="unknown SpMM kernel"):
        P.plan_spmm(poisson, 4, "fused16")  # a benchmark variant, not a public kernel
    assert any("fused class" in line for line in plan.summary())


