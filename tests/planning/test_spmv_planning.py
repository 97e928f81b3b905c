"""spla.plan on the CPU: bins, thresholds, dense rows, descriptors, summary, and
the auto policy (both need only row statistics, so they run without a GPU).

The descriptors are checked by executing them in NumPy exactly as
kernels/spmv_adaptive.cu reads them: every row must be written exactly once
and the result must match SciPy.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp

from spla import io
from spla.cli.spmv import auto_line
from spla.csr import CSRMatrix
from spla.errors import InputError
from spla.planning import adaptive, segmented
from spla.planning import spmv as rules
from spla.planning.stats import RowStats, near_share, row_stats


def _matrix(rows, n_cols, rng, dtype=np.float64):
    """CSR from a list of (length or explicit column list) per row, random values."""
    indptr, indices = [0], []
    for spec in rows:
        cols = spec if isinstance(spec, (list, np.ndarray)) else rng.choice(n_cols, size=spec, replace=False)
        indices.extend(int(c) for c in cols)
        indptr.append(len(indices))
    data = rng.uniform(-1, 1, len(indices)).astype(dtype)
    return CSRMatrix(data, np.asarray(indices, dtype=np.int64), np.asarray(indptr), (len(rows), n_cols))


def execute(plan, A, x, *, all_blocks=True):
    """Run the plan's descriptors the way spla_spmv_adaptive does; count writes per row."""
    indptr, indices, data = A.indptr.astype(np.int64), A.indices, A.data
    y = np.zeros(A.n_rows)
    writes = np.zeros(A.n_rows, dtype=np.int64)
    partials = {}
    n_blocks = plan.blocks.shape[0] if all_blocks else plan.n_main_blocks
    chunk = plan.thresholds.chunk
    for row_begin, row_end, kind, split_id in plan.blocks[:n_blocks].tolist():
        if kind == adaptive.KIND_ROWS:  # spmv_adaptive2: rows listed by length, width lanes each
            width = split_id
            assert width in adaptive.LANE_WIDTHS and row_end - row_begin <= adaptive.ADAPTIVE_THREADS // width
            for r in plan.row_list[row_begin:row_end].tolist():
                s, e = indptr[r], indptr[r + 1]
                y[r] = data[s:e] @ x[indices[s:e]]
                writes[r] += 1
        elif kind > 0:
            assert kind in adaptive.LANE_WIDTHS
            assert indptr[row_end] - indptr[row_begin] <= adaptive.ADAPTIVE_STAGE
            assert row_end - row_begin < adaptive.ADAPTIVE_STAGE  # adaptive2 stages the row offsets
            for r in range(row_begin, row_end):
                s, e = indptr[r], indptr[r + 1]
                y[r] = data[s:e] @ x[indices[s:e]]
                writes[r] += 1
        elif kind == 0:
            assert row_end == row_begin + 1
            s, e = indptr[row_begin], indptr[row_begin + 1]
            y[row_begin] = data[s:e] @ x[indices[s:e]]
            writes[row_begin] += 1
        else:
            c = -kind - 1
            lo = indptr[row_begin] + c * chunk
            hi = min(lo + chunk, indptr[row_begin + 1])
            assert lo < hi, f"empty chunk {c} of row {row_begin}"
            partials.setdefault((row_begin, split_id), {})[c] = data[lo:hi] @ x[indices[lo:hi]]
    for (row, split_id), parts in partials.items():
        n_chunks = plan.split_offsets[split_id + 1] - plan.split_offsets[split_id]
        assert sorted(parts) == list(range(n_chunks)), f"row {row}: chunks {sorted(parts)} of {n_chunks}"
        y[row] = sum(parts[c] for c in range(n_chunks))
        writes[row] += 1
    return y, writes


def _mixed(rng, n_rows=3000, n_cols=200000):
    lengths = rng.integers(0, 12, n_rows)
    medium = n_rows // 50
    lengths[rng.choice(n_rows, medium, replace=False)] = rng.integers(200, 3000, medium)  # stream/block edge
    lengths[rng.choice(n_rows, n_rows // 10, replace=False)] = 0                 # empty rows
    lengths[[5, n_rows // 2]] = [9000, 15000]                                   # split rows (sparse)
    return _matrix(list(lengths), n_cols, rng)


def test_bins_partition_rows_and_nnz(rng):
    A = _mixed(rng)
    plan = adaptive.plan_for(A)
    rows = np.concatenate([b.rows for b in plan.bins])
    assert np.array_equal(np.sort(rows), np.arange(A.n_rows)), "every row in exactly one bin"
    assert sum(b.nnz for b in plan.bins) == A.nnz
    lengths = np.diff(A.indptr)
    t = plan.thresholds
    assert [b.name for b in plan.bins] == list(adaptive.PATHS)
    assert (lengths[plan.bin("stream").rows] <= t.stream_max).all()
    blocked = lengths[plan.bin("block").rows]
    assert ((blocked > t.stream_max) & (blocked <= t.chunk)).all()
    assert (lengths[plan.bin("split").rows] > t.chunk).all()
    assert plan.bin("split").rows.tolist() == [5, A.n_rows // 2]


def test_descriptors_compute_the_product(rng):
    A = _mixed(rng)
    x = rng.uniform(-1, 1, A.n_cols)
    plan = adaptive.plan_for(A)
    y, writes = execute(plan, A, x)
    assert (writes == 1).all(), f"rows written {np.unique(writes)} times"
    np.testing.assert_allclose(y, A.to_scipy() @ x, rtol=1e-12, atol=1e-12)


def test_threshold_boundaries(rng):
    t = adaptive.Thresholds()
    lengths = [t.stream_max, t.stream_max + 1, t.chunk, t.chunk + 1, 0, 1]
    A = _matrix(lengths, 3 * t.chunk, rng)
    plan = adaptive.plan_for(A, dense_threshold=2.0)
    assert plan.bin("stream").rows.tolist() == [0, 4, 5]
    assert plan.bin("block").rows.tolist() == [1, 2]
    assert plan.bin("split").rows.tolist() == [3]
    assert plan.split_offsets.tolist() == [0, 2]
    y, writes = execute(plan, A, np.ones(A.n_cols))
    assert (writes == 1).all()


def test_dense_rows_are_detected_by_nnz_and_density(rng):
    n_cols = 10000
    rows = [
        list(range(1000, 1000 + 600)),            # 600 nnz over 600 columns: dense
        list(range(0, 1200, 2)),                  # 600 over 1199: density 0.5004 -> dense
        list(range(0, 1206, 2)),                  # 603 over 1205: 0.5004 -> dense
        list(range(0, 1800, 3)),                  # 600 over 1798: 0.33 -> sparse
        list(range(5000, 5100)),                  # dense but only 100 nnz: below dense_min_nnz
        5,
        list(range(8000, 8600))[::-1],            # dense, columns unsorted
    ]
    A = _matrix(rows, n_cols, rng)
    plan = adaptive.plan_for(A, dense_min_nnz=500, dense_threshold=0.5)
    assert plan.dense_rows.tolist() == [0, 1, 2, 6]
    for panel in plan.dense_panels:
        assert panel.nnz >= 0.5 * panel.elements, "every panel stays threshold-dense"
        lengths = np.diff(A.indptr)[panel.rows]
        assert panel.nnz == lengths.sum()
    covered = np.sort(np.concatenate([p.rows for p in plan.dense_panels]))
    assert covered.tolist() == [0, 1, 2, 6]
    spans = {int(r): (p.col_begin, p.col_end) for p in plan.dense_panels for r in p.rows}
    assert spans[6][0] <= 8000 and spans[6][1] >= 8600
    # main blocks skip dense rows; fallback blocks cover exactly them
    y_main, writes_main = execute(plan, A, np.ones(n_cols), all_blocks=False)
    assert writes_main[[0, 1, 2, 6]].tolist() == [0, 0, 0, 0]
    assert writes_main[[3, 4, 5]].tolist() == [1, 1, 1]
    y_all, writes_all = execute(plan, A, np.ones(n_cols))
    assert (writes_all == 1).all()
    assert adaptive.plan_for(A, dense_min_nnz=500, dense_threshold=0.6).dense_rows.tolist() == [0, 6]
    assert adaptive.plan_for(A, dense_min_nnz=500, dense_threshold=1.5).dense_rows.size == 0


def test_far_apart_dense_rows_get_separate_panels(rng):
    rows = [list(range(0, 700)), list(range(50, 760)), list(range(90000, 90700)), 3]
    A = _matrix(rows, 100000, rng)
    plan = adaptive.plan_for(A, dense_min_nnz=500)
    panels = sorted((p.col_begin, p.col_end, p.rows.tolist()) for p in plan.dense_panels)
    assert panels == [(0, 760, [0, 1]), (90000, 90700, [2])]


def test_summary_numbers(rng):
    A = _mixed(rng)
    plan = adaptive.plan_for(A)
    s = plan.summary()
    lengths = np.diff(A.indptr)
    for b in plan.bins:
        assert s["paths"][b.name]["rows"] == b.rows.size
        assert s["paths"][b.name]["nnz"] == lengths[b.rows].sum()
    # block work recomputed from the descriptors
    work = []
    for row_begin, row_end, kind, _ in plan.blocks[: plan.n_main_blocks].tolist():
        whole = A.indptr[row_end] - A.indptr[row_begin]
        if kind < 0:
            c = -kind - 1
            work.append(min(plan.thresholds.chunk, whole - c * plan.thresholds.chunk))
        else:
            work.append(whole)
    work = np.asarray(work)
    assert s["blocks"] == work.size
    assert sum(work) == A.nnz - plan.bin("dense").nnz
    assert s["block_nnz_max"] == work.max()
    assert s["imbalance"] == pytest.approx(work.max() / work.mean())
    assert s["thresholds"]["chunk"] == plan.thresholds.chunk


def test_stream_blocks_fit_and_rows_stay_in_order(rng):
    A = _matrix(list(rng.integers(0, 257, 5000)), 4000, rng)
    plan = adaptive.plan_for(A)
    stream = plan.blocks[plan.blocks[:, adaptive.KIND] > 0]
    nnz = A.indptr[stream[:, 1]] - A.indptr[stream[:, 0]]
    assert nnz.max() <= adaptive.ADAPTIVE_STAGE
    assert (np.diff(plan.blocks[: plan.n_main_blocks, 0]) >= 0).all()
    # short blocks hold many rows: far fewer blocks than rows
    assert stream.shape[0] < A.n_rows / 4


def test_lanes_follow_row_count_and_length():
    lanes = adaptive._lanes_per_row(np.array([1, 8, 256, 1000]), np.array([200, 200, 5, 1]))
    assert lanes[0] == 32            # one long-ish row: a full warp
    assert lanes[2] == 1             # many 5-nnz rows: a thread each
    assert lanes[3] == 1
    assert 8 <= lanes[1] <= 32


@pytest.mark.parametrize("shape,lengths", [((0, 5), []), ((4, 0), [0, 0, 0, 0]), ((1, 1), [1]),
                                           ((3, 7), [0, 0, 0])])
def test_degenerate_matrices(rng, shape, lengths):
    A = _matrix(lengths, shape[1], rng) if lengths else CSRMatrix(np.zeros(0), np.zeros(0, int), [0], shape)
    plan = adaptive.plan_for(A)
    y, writes = execute(plan, A, np.ones(shape[1]))
    assert (writes == 1).all()
    assert plan.summary()["paths"]["stream"]["rows"] == shape[0]


def test_plans_are_cached_per_thresholds(rng):
    A = _mixed(rng, n_rows=200)
    assert adaptive.plan_for(A) is adaptive.plan_for(A)
    assert adaptive.plan_for(A, chunk=1024) is not adaptive.plan_for(A)
    assert adaptive.plan_for(A, chunk=1024).thresholds.chunk == 1024


def test_bad_thresholds_are_refused(rng):
    A = _mixed(rng, n_rows=50)
    with pytest.raises(InputError, match="stream_max"):
        adaptive.plan_for(A, stream_max=adaptive.ADAPTIVE_STAGE)
    with pytest.raises(InputError, match="chunk"):
        adaptive.plan_for(A, chunk=8)
    with pytest.raises(InputError, match="dense_threshold"):
        adaptive.plan_for(A, dense_threshold=0)


def test_row_stats(rng):
    A = _mixed(rng, n_rows=500)
    s = row_stats(A)
    lengths = np.diff(A.indptr)
    assert s.max == lengths.max() and s.empty == np.count_nonzero(lengths == 0)
    assert s.mean == pytest.approx(lengths.mean())
    assert s.cv == pytest.approx(lengths.std() / lengths.mean())


# ------------------------------------------------------------- auto policy
def _csr(M):
    return CSRMatrix.from_scipy(sp.csr_matrix(M))


def scattered():
    """A matrix's near share for the rule: no neighbouring columns close."""
    return 0.0


def test_auto_policy_classes(rng):
    poisson = sp.diags([-1.0, -1.0, 4.0, -1.0, -1.0], [-30, -1, 0, 1, 30], shape=(900, 900))
    assert rules.describe_choice(_csr(poisson))["class"] == "short-few-rows"  # 900 threads: too few
    assert rules.choose_kernel(_csr(poisson)) == rules.AUTO_RULE["short-few-rows"] == "warp"
    many_rows = dataclasses.replace(row_stats(_csr(poisson)), n_rows=rules.AUTO.short_rows)
    assert rules.matrix_class(many_rows, 2, scattered) == "short-tiny"  # rows of at most 5: a thread each
    nine = dataclasses.replace(many_rows, mean=9.0, max=9)
    assert rules.matrix_class(nine, 2, scattered) == "short" and rules.AUTO_RULE["short"] == "vector"
    band = sp.diags([np.ones(2000, dtype=float)] * 41, list(range(-20, 21)), shape=(2000, 2000))
    assert rules.choose_kernel(_csr(band)) == rules.AUTO_RULE["medium"]
    power = _matrix(list(np.minimum(rng.zipf(1.7, 3000), 2000)), 5000, rng)
    irregular = rules.AUTO_RULE["irregular"]
    assert rules.choose_kernel(power) == irregular
    one_long = _matrix([3] * 100 + [5000], 6000, rng)
    assert rules.choose_kernel(one_long) == irregular
    assert rules.describe_choice(one_long)["class"] == "irregular"
    stats = row_stats(one_long)
    pack = rules.pack_entries(one_long.dtype, one_long.index_dtype)  # float64: 2 entries a 16-byte pack
    assert pack == 2
    # from large_nnz nonzeros an irregular matrix runs staged, short rows (here with an empty row) or not
    short_rows = row_stats(_matrix([2] * 3000 + [400] * 10, 5000, rng))
    for row_stats_of in (stats, dataclasses.replace(short_rows, empty=1)):
        large = dataclasses.replace(row_stats_of, nnz=rules.AUTO.large_nnz)
        assert rules.matrix_class(large, pack, scattered) == "irregular-large"
        assert rules.AUTO_RULE["irregular-large"] == "staged"
        smaller = dataclasses.replace(large, nnz=rules.AUTO.large_nnz - 1)
        assert rules.matrix_class(smaller, pack, scattered) != "irregular-large"
    # ... but rows of at most segmented_mean on average with no empty row run segmented (its bitmap
    # entry; sets 14-16, session 24): at any size where a 16-byte pack holds 4 entries (float32),
    # below large_nnz where it holds 2 (float64); staged again where bitmap_rows is off
    assert short_rows.empty == 0 and short_rows.mean <= rules.AUTO.segmented_mean
    assert rules.matrix_class(dataclasses.replace(short_rows, nnz=rules.AUTO.mid_nnz), pack, scattered) == \
        "irregular-short"  # irregular-mid's size too (with an empty row it runs staged: mid below)
    for nnz in (rules.AUTO.large_nnz, rules.AUTO.large_nnz * 10):
        sized = dataclasses.replace(short_rows, nnz=nnz)
        assert rules.matrix_class(sized, 4, scattered) == "irregular-short"
        assert rules.matrix_class(sized, pack, scattered) == "irregular-large"
    no_bitmap = dataclasses.replace(rules.AUTO, bitmap_rows=False)
    assert rules.matrix_class(dataclasses.replace(short_rows, nnz=rules.AUTO.large_nnz), 4, scattered,
                              no_bitmap) == "irregular-large"
    longer_rows = dataclasses.replace(short_rows, nnz=rules.AUTO.large_nnz, mean=rules.AUTO.segmented_mean + 0.1)
    assert rules.matrix_class(longer_rows, 4, scattered) == "irregular-large"
    # a huge row too (the fitted huge_share is infinite: staged beat adaptive2 on the corpus's large
    # huge-row matrices), while it holds less than huge_share of the nonzeros; from a finite share
    # on it keeps adaptive2 at any size; below large_nnz a huge row runs adaptive2
    nnz = rules.AUTO.large_nnz * 4
    huge_row = dataclasses.replace(stats, nnz=nnz, max=nnz // 2)
    assert rules.matrix_class(huge_row, pack, scattered) == "irregular-large"
    assert rules.matrix_class(dataclasses.replace(huge_row, nnz=rules.AUTO.large_nnz - 1, max=rules.AUTO.huge_row + 1),
                              pack, scattered) == "huge"
    finite = dataclasses.replace(rules.AUTO, huge_share=0.01)
    for share, klass in ((0.9, "irregular-large"), (1.1, "huge")):
        longest = max(finite.huge_row + 1, int(share * finite.huge_share * nnz))
        huge_stats = dataclasses.replace(stats, nnz=nnz, max=longest)
        assert rules.matrix_class(huge_stats, pack, scattered, finite) == klass
    band_stats = row_stats(_csr(band))  # large regular rows: by their columns and x (next test)
    larger_band = dataclasses.replace(band_stats, nnz=rules.AUTO.large_nnz * 2)
    assert rules.matrix_class(larger_band, pack, scattered) == "regular-large"
    # irregular rows of a few entries on average: segmented's equal tiles
    short_power = _matrix([2] * 3000 + [500] * 10, 5000, rng)
    assert rules.describe_choice(short_power)["class"] == "irregular-short"
    # ... unless vector's lanes read the longest row in at most narrow_steps 16-byte steps: 3,010 rows
    # take 8 lanes (lanes_for's 2 widened twice), so rows of 260 take 16.25 steps of 2 float64 entries
    narrow = _matrix([2] * 3000 + [260] * 10, 5000, rng)
    assert rules.longest_row_steps(row_stats(narrow), pack) == 16.25 <= rules.AUTO.narrow_steps
    assert rules.describe_choice(narrow)["class"] == "irregular-narrow"
    assert rules.choose_kernel(narrow) == rules.AUTO_RULE["irregular-narrow"] == "vector"
    wider = _matrix([2] * 3000 + [280] * 10, 5000, rng)
    assert rules.describe_choice(wider)["class"] == "irregular-short"
    # float32's packs hold 4 entries: rows of 500 take 15.6 steps there, 31.3 in float64
    assert rules.matrix_class(row_stats(short_power), 4, scattered) == "irregular-narrow"
    assert rules.matrix_class(row_stats(short_power), pack, scattered) == "irregular-short"
    assert rules.describe_choice(short_power.astype(np.float32))["class"] == "irregular-narrow"
    larger_narrow = dataclasses.replace(row_stats(narrow), nnz=rules.AUTO.large_nnz, empty=1)
    assert rules.matrix_class(larger_narrow, pack, scattered) == "irregular-large"
    # from mid_nnz nonzeros, rows of scattered columns (near share under mid_near), short on average
    # (and, as short as these, with an empty row), run staged
    mid = dataclasses.replace(row_stats(short_power), nnz=rules.AUTO.mid_nnz, empty=1)
    assert mid.mean <= rules.AUTO.mid_mean
    assert rules.matrix_class(mid, pack, scattered) == "irregular-mid" and rules.AUTO_RULE["irregular-mid"] == "staged"
    smaller_mid = dataclasses.replace(mid, nnz=rules.AUTO.mid_nnz - 1)
    assert rules.matrix_class(smaller_mid, pack, scattered) == "irregular-short"

    def close():  # neighbouring columns close: loads that stream stay with the row-length classes
        return rules.AUTO.mid_near

    assert rules.matrix_class(mid, pack, close) == "irregular-short"
    longer = dataclasses.replace(mid, mean=rules.AUTO.mid_mean + 1, max=5000)  # a warp a row in staged
    assert rules.matrix_class(longer, pack, scattered) == "irregular"
    assert rules.choose_kernel(short_power) == rules.AUTO_RULE["irregular-short"] == "segmented"
    assert auto_line(rules.describe_choice(short_power)).startswith("auto runs   segmented:8:")  # K of float64
    # every row long (a short-wide rectangle): a warp per row (vector:32), once there are rows enough to fill the GPU
    long_rows = int(rules.AUTO.long_mean) * 2
    wide = RowStats(n_rows=rules.AUTO.long_rows, nnz=rules.AUTO.long_rows * long_rows, mean=long_rows, std=0.0,
                    cv=0.0, max=long_rows, empty=0)
    assert rules.matrix_class(wide, 2, scattered) == "long" and rules.AUTO_RULE["long"] == "vector"
    assert rules.matrix_class(dataclasses.replace(wide, n_rows=40, nnz=40 * long_rows), 2, scattered) == "irregular"
    few = _matrix([long_rows] * 40, 200000, rng)  # 40 warps would leave the GPU idle: adaptive2 splits them
    assert rules.describe_choice(few)["class"] == "irregular"
    empty = CSRMatrix(np.zeros(0), np.zeros(0, int), np.zeros(11, int), (10, 10))
    assert rules.choose_kernel(empty) == "scalar"
    huge_row = rules.AUTO.huge_row + 1
    huge = CSRMatrix(np.ones(huge_row + 9), np.concatenate([np.arange(huge_row), np.arange(9)]),
                     np.array([0, huge_row, huge_row + 4, huge_row + 9]), (3, huge_row))
    assert rules.describe_choice(huge)["class"] == "huge"
    assert rules.choose_kernel(huge) == rules.AUTO_RULE["huge"]


def test_kernel_names_parse():
    assert rules.parse_kernel("warp:8") == ("warp", 8)
    assert rules.parse_kernel("adaptive") == ("adaptive", None)
    assert rules.parse_kernel("segmented:16") == ("segmented", 16)
    for bad in ("nope", "scalar:4", "warp:3", "vector:64", "segmented:2", "segmented:32", "adaptive:8"):
        with pytest.raises(InputError):
            rules.parse_kernel(bad)
    assert list(rules.KERNELS)[:4] == ["scalar", "warp", "vector", "adaptive"]


def test_lanes_for_row_groups_of_8_entries_and_two_loads_a_lane_below():
    # vector packs: 4 entries (float32, int32), 2 (float64, int32); warp reads 1
    assert [rules.lanes_for(mean, 4) for mean in (1, 5, 8, 25, 33, 81, 200, 1000)] == [2, 2, 2, 2, 4, 8, 16, 32]
    assert [rules.lanes_for(mean, 2) for mean in (1, 5, 8, 25, 33, 81, 200, 1000)] == [2, 2, 4, 4, 4, 8, 16, 32]
    assert [rules.lanes_for(mean) for mean in (1, 5, 7, 8, 41, 128, 129, 1000)] == [2, 4, 4, 8, 8, 8, 16, 32]
    for step in (1, 2, 4):
        for mean in np.linspace(1, 2000, 200):
            lanes = rules.lanes_for(mean, step)
            assert lanes in rules.LANE_WIDTHS
            if mean >= rules.ROW_GROUP_ENTRIES:
                assert lanes * step >= rules.ROW_GROUP_ENTRIES
                assert lanes == 32 or mean / lanes <= rules.LANE_ENTRIES
            else:
                assert lanes == 2 or lanes * step < mean  # about two loads a lane


def test_lanes_double_where_the_rows_leave_the_gpu_short_of_threads():
    fill = rules.FILL_THREADS
    most = 2 ** rules.LANE_DOUBLINGS
    for mean, step in ((3, 1), (16, 2), (40, 4), (100, 1)):
        width = rules.lanes_for(mean, step)
        many = -(-fill // width)  # rows enough for FILL_THREADS threads at the rule's width
        assert rules.lanes_for(mean, step, many) == width
        assert rules.lanes_for(mean, step, many - 1) == min(2 * width, 32)
        assert rules.lanes_for(mean, step, -(-fill // (2 * width))) == min(2 * width, 32)  # doubled just enough
        assert rules.lanes_for(mean, step, 1) == min(most * width, 32)  # at most LANE_DOUBLINGS times
    assert rules.lanes_for(5000, 1, 10) == 32  # the widest stays the widest


def test_bound_param_fills_in_each_family_default(rng):
    """What a plain kernel name compiles with (ab_kernel.py compiles its variants the same way)."""
    A = _matrix([list(range(r, r + 16)) for r in range(64)], 100, rng)  # float64, int32: packs of 2 entries
    assert rules.bound_param(A, "segmented", None) == segmented.segmented_default(np.float64) == 8
    assert rules.bound_param(A.astype(np.float32), "segmented", None) == 16
    assert rules.bound_param(A, "segmented", 4) == 4
    # 64 rows: far too few threads, so the lanes rule's width doubles, twice
    assert rules.bound_param(A, "vector", None) == 4 * rules.lanes_for(16, 2) == 16
    assert rules.bound_param(A.astype(np.float32), "vector", None) == 4 * rules.lanes_for(16, 4) == 8
    assert rules.bound_param(A, "warp", None) == 4 * rules.lanes_for(16) == 32
    assert rules.bound_param(A, "warp", 32) == 32
    assert rules.bound_param(A, "scalar", None) is None


def test_rows_of_scattered_columns_take_one_step_a_row(rng):
    """warp and vector give rows whose neighbouring columns are rarely close one lane a pack
    (the whole row in one step); rows of near columns keep about two loads a lane."""
    n = 1 << 20
    local = _matrix([list(range(r, r + 16)) for r in range(0, 2 * n, 2 * n // 4096)], 2 * n + 16, rng)
    scattered = _matrix([np.sort(rng.choice(2 * n, size=16, replace=False)) for _ in range(4096)], 2 * n, rng)
    assert near_share(local) == 1.0 and near_share(scattered) < 0.01 < rules.SCATTERED_NEAR

    def lanes(A, family, dtype=np.float64):
        A = A.astype(dtype)
        A._cache["row_stats"] = dataclasses.replace(row_stats(A), n_rows=n)  # rows enough: no doubling
        return rules.bound_param(A, family, None)

    assert rules.lanes_for(16, 2) == 4 and rules.lanes_for(16, 4) == 2 and rules.lanes_for(16) == 8
    assert lanes(local, "vector") == 4 and lanes(scattered, "vector") == 8
    assert lanes(local, "vector", np.float32) == 2 and lanes(scattered, "vector", np.float32) == 4
    assert lanes(local, "warp") == 8 and lanes(scattered, "warp") == 16
    choice = rules.describe_choice(scattered)
    assert choice["near_share"] == near_share(scattered)
    assert "(scattered columns: one step a row)" in auto_line({**choice, "kernel": "vector", "lanes": 8})
    assert "scattered" not in auto_line({**rules.describe_choice(local), "kernel": "vector", "lanes": 4})
    assert rules.lanes_for(200, 4, scattered=True) == 32 and rules.lanes_for(3, 4, scattered=True) == 2
    # an x that fits in L1 is not scattered, whatever its columns: its gathers hit L1
    narrow_x = _matrix([np.sort(rng.choice(4096, size=16, replace=False)) for _ in range(4096)], 4096, rng)
    assert near_share(narrow_x) < rules.SCATTERED_NEAR and 4096 * 8 <= rules.SCATTERED_MIN_X_BYTES
    assert not rules.scattered_columns(narrow_x) and rules.scattered_columns(scattered)
    assert lanes(narrow_x, "vector") == 4


def _rows_of(k: int, window: int, n_rows: int, rng) -> CSRMatrix:
    """Rows of k distinct columns within a window of ``window`` columns from the diagonal (window k: consecutive)."""
    offsets = np.argsort(rng.random((n_rows, window)), axis=1)[:, :k]
    cols = np.sort(np.minimum(np.arange(n_rows)[:, None] + offsets, n_rows + window), axis=1)
    return CSRMatrix(np.ones(n_rows * k), cols.ravel(), np.arange(n_rows + 1) * k, (n_rows, n_rows + window))


def test_vector_takes_4_lanes_on_float32_rows_of_28_and_more_unless_columns_run(rng):
    n_rows = rules.FILL_THREADS // 2  # enough rows that 2 lanes fill the GPU (no widening)
    knn_32 = _rows_of(32, 200, n_rows, rng).astype(np.float32)  # near share about 0.75
    assert rules.lanes_for(32, 4, n_rows) == 2 and rules.bound_param(knn_32, "vector", None) == 4
    assert rules.bound_param(knn_32.astype(np.float64), "vector", None) == rules.lanes_for(32, 2, n_rows)
    assert rules.bound_param(_rows_of(24, 200, n_rows, rng).astype(np.float32), "vector", None) == 2
    consecutive = _rows_of(32, 32, n_rows, rng).astype(np.float32)  # a band: near share 1
    assert near_share(consecutive) == 1.0 and rules.bound_param(consecutive, "vector", None) == 2
    assert rules.bound_param(knn_32, "warp", None) == rules.lanes_for(32, 1, n_rows)  # warp's rule is its own
    asked = []
    assert not rules.vector_widens(2, 24.0, 4, lambda: asked.append(1) or 0.0) and not asked  # near asked last


def test_near_share_samples_rows_and_reads_neighbours_within_a_row(rng):
    # rows of one entry have no neighbours: 1.0; an empty matrix too
    assert near_share(_matrix([[5], [900], [3]], 1000, rng)) == 1.0
    assert near_share(CSRMatrix(np.zeros(0), np.zeros(0, int), np.zeros(4, int), (3, 3))) == 1.0
    # gaps of 8 are near, 9 are not; the pair across two rows is not a neighbour pair
    A = _matrix([[0, 8, 17], [100, 109, 118]], 200, rng)
    assert near_share(A) == 1 / 4
    # unsorted rows count the distance between consecutive entries
    assert near_share(_matrix([[50, 40, 45]], 100, rng)) == 1 / 2
    # only the first NEAR_ROW_ENTRIES of a row are read
    long_row = list(range(0, 64 * 100, 100)) + list(range(6400, 6400 + 64))
    assert near_share(_matrix([long_row], 7000, rng)) == 0.0


def test_tile_span_is_the_median_window_of_a_sampled_tile(rng):
    from spla.planning.stats import TILE_SPAN_ENTRIES, TILE_SPAN_KEY, tile_span

    # rows drawn from diagonal blocks of 512 columns, 8 a row: a tile of 4,096 nonzeros covers one block
    n, block = 4 * TILE_SPAN_ENTRIES // 8 * 4, 512
    rows = [np.sort(rng.choice(block, 8, replace=False)) + (i * 8 // TILE_SPAN_ENTRIES) * block for i in range(n)]
    blocks = _matrix(rows, n * 8 // TILE_SPAN_ENTRIES * block, rng)
    spans = [int(np.ptp(blocks.indices[k:k + TILE_SPAN_ENTRIES])) for k in range(0, blocks.nnz, TILE_SPAN_ENTRIES)]
    assert tile_span(blocks) == np.median(spans) and tile_span(blocks) < block
    assert blocks._cache[TILE_SPAN_KEY] == tile_span(blocks), "cached on the matrix"
    # scattered columns: about the width of x
    wide = _matrix([np.sort(rng.choice(1_000_000, 8, replace=False)) for _ in range(2 * TILE_SPAN_ENTRIES // 8)],
                   1_000_000, rng)
    assert tile_span(wide) > 900_000
    # under one tile: 0.0, nothing to sample
    assert tile_span(_matrix([[0, 5000]], 6000, rng)) == 0.0
    # spla info says it once the rule has read it
    line = auto_line({"kernel": "staged", "class": "regular-large", "near_share": 0.01, "tile_span": 4064.0,
                      "tile_lines": 128.0})
    assert line.endswith("(class regular-large, near share 0.01, a tile spans 4,064 columns and reads 128 lines of x)")


@pytest.mark.parametrize("dtype, line", [(np.float32, 32), (np.float64, 16)])
def test_tile_lines_count_the_lines_of_x_a_sampled_tile_gathers_from(rng, dtype, line):
    """tile_lines: the median over the sampled tiles of the distinct 128-byte lines of x (32 float32
    or 16 float64 columns) a tile's nonzeros read; sampled with tile_span, and cached with it."""
    from spla.planning.stats import TILE_LINES_KEY, TILE_SPAN_ENTRIES, TILE_SPAN_KEY, tile_lines, tile_span

    n = 4 * TILE_SPAN_ENTRIES // 8
    # 8 consecutive columns a row, starting on a line: a row reads one line
    runs = _matrix([np.arange(8) + line * (i % 1000) for i in range(n)], line * 1000, rng, dtype=dtype)
    assert tile_lines(runs) == TILE_SPAN_ENTRIES // 8
    assert runs._cache[TILE_SPAN_KEY] == tile_span(runs), "sampled together"
    # the same column in every row: one line a tile
    same = _matrix([[5] for _ in range(2 * TILE_SPAN_ENTRIES)], 100, rng, dtype=dtype)
    assert tile_lines(same) == 1.0 and same._cache[TILE_LINES_KEY] == 1.0
    # every column on a line of its own: every nonzero a new line
    spread = _matrix([np.arange(8) * line + 8 * line * i for i in range(n)], 8 * line * n, rng, dtype=dtype)
    assert tile_lines(spread) == TILE_SPAN_ENTRIES
    # exactly counted: lines of each sampled tile against NumPy's unique
    wide = _matrix([np.sort(rng.choice(40_000, 8, replace=False)) for _ in range(n)], 40_000, rng, dtype=dtype)
    counts = [np.unique(wide.indices[k:k + TILE_SPAN_ENTRIES] // line).size
              for k in range(0, wide.nnz - TILE_SPAN_ENTRIES + 1, TILE_SPAN_ENTRIES)]
    assert tile_lines(wide) == np.median(counts)
    assert tile_lines(_matrix([[0, 5000]], 6000, rng, dtype=dtype)) == 0.0


# ---------------------------------------------------- segmented tile rows
@pytest.mark.parametrize("tile", [1, 4, 128, 256])
def test_segmented_tiles_own_the_rows_that_start_in_them(rng, tile):
    lengths = np.concatenate([rng.integers(0, 9, 300), [0, 700, 0, 0, 256, 128, 0, 1], np.zeros(5, int)])
    A = _matrix(list(rng.permutation(lengths[:-5])) + [0] * 5, 900, rng)
    tile_rows = segmented.segmented_tile_rows(A, tile)
    indptr = np.asarray(A.indptr, dtype=np.int64)
    n_tiles = -(-A.nnz // tile)
    assert tile_rows.size == n_tiles + 1 and tile_rows[0] == 0 and tile_rows[-1] == A.n_rows
    owner = np.minimum(indptr[:-1] // tile, n_tiles - 1)  # trailing empty rows: the last tile
    counts = np.bincount(owner, minlength=n_tiles)
    np.testing.assert_array_equal(np.diff(tile_rows), counts)
    assert segmented.segmented_tile_rows(A, tile) is tile_rows, "cached on the matrix"


def test_staged_palette_is_found_where_a_call_touches_enough_and_values_are_few(rng, monkeypatch):
    """staged's palette: the values' codes and table (bit for bit) where a call touches at least
    STAGED_PALETTE_MIN_BYTES, the dtype is in STAGED_PALETTE and the values take 2-255 bit patterns;
    none for a matrix of one value (the _uniform entries read none) or of 256 values; cached on the
    matrix until refresh()."""
    indptr = np.arange(0, 20_001, 4)
    indices = rng.integers(0, 3000, indptr[-1])
    A = CSRMatrix(rng.choice(np.array([2.0, -0.5, 0.0, 7.25]), indptr[-1]), indices, indptr, (5000, 3000))
    touched = A.data.nbytes + A.indices.nbytes + (5000 + 3000) * 8
    monkeypatch.setattr(segmented, "STAGED_PALETTE_MIN_BYTES", touched + 1)
    assert segmented.staged_palette(A) is None and "staged-palette" not in A._cache  # no detection at all
    monkeypatch.setattr(segmented, "STAGED_PALETTE_MIN_BYTES", touched)
    found = segmented.staged_palette(A)
    assert found.n_values == 3 and found.table[0] == 0 and found.codes.dtype == np.uint8
    np.testing.assert_array_equal(found.table[found.codes].view(np.uint64), A.data.view(np.uint64))
    assert segmented.staged_palette(A) is found, "cached on the matrix"
    A.data[:] = 1.5
    A.refresh()
    assert segmented.staged_uniform(A) and segmented.staged_palette(A) is None
    A.data[:256] = np.arange(256) + 0.5  # 257 values
    A.refresh()
    assert segmented.staged_palette(A) is None
    A.data[:] = rng.choice(np.array([2.0, -0.5]), indptr[-1])
    A.refresh()
    monkeypatch.setattr(segmented, "STAGED_PALETTE", ("float32",))
    monkeypatch.setattr(segmented, "STAGED_PALETTE_MIN_BYTES", 0)
    assert segmented.staged_palette(A) is None
    assert segmented.staged_palette(A.astype(np.float32)).n_values == 2


def test_staged_takes_the_largest_t_whose_tiles_fill_the_gpu():
    """16 KiB of products a block bound T by dtype; below STAGED_MIN_TILES tiles T shrinks."""
    assert segmented.staged_entries(np.float32) == (4, 8, 16) and segmented.staged_entries(np.float64) == (4, 8)
    tiles = segmented.STAGED_MIN_TILES * segmented.STAGED_THREADS
    for dtype, largest in ((np.float32, 16), (np.float64, 8)):
        assert segmented.staged_default(dtype, 10**9) == largest
        assert segmented.staged_default(dtype, tiles * largest) == largest
        assert segmented.staged_default(dtype, tiles * largest - 1) == largest // 2
        assert segmented.staged_default(dtype, 0) == 4
    assert segmented.staged_default(np.float32, 10**6, min_tiles=0) == 16


@pytest.mark.parametrize("tile", [128, 256, 512])
def test_segmented_end_bits_mark_each_rows_last_nonzero(rng, tile):
    """One bit a nonzero, set on the last of its row, padded to whole tiles of tile / 32 words;
    rows ending on tile edges and rows over several tiles included. The plan carries them only
    where no row is empty (those tiles walk their rows instead)."""
    lengths = list(rng.permutation(np.r_[rng.integers(1, 9, 300), [700, 256, 128, 1, 2 * tile, tile - 1]]))
    A = _matrix(lengths, 1024, rng).astype(np.float32)
    bits = segmented.segmented_end_bits(A, tile)
    indptr = np.asarray(A.indptr, dtype=np.int64)
    assert bits.dtype == np.uint32 and bits.size == -(-A.nnz // tile) * tile // 32
    flags = np.unpackbits(bits.view(np.uint8), bitorder="little").astype(bool)
    np.testing.assert_array_equal(np.flatnonzero(flags), indptr[1:] - 1)
    assert segmented.segmented_end_bits(A, tile) is bits, "cached on the matrix"
    assert rules.plan_spmv(A, f"segmented:{tile // 32}").end_bits is bits
    assert not rules.plan_spmv(A, f"segmented:{tile // 32}").rows_within_tile  # a row of 2 * tile
    short = _matrix([tile, 1, tile - 1, 3] * 4, 1024, rng).astype(np.float32)
    assert rules.plan_spmv(short, f"segmented:{tile // 32}").rows_within_tile
    with_empty = _matrix(lengths[:10] + [0] + lengths[10:], 1024, rng).astype(np.float32)
    assert rules.plan_spmv(with_empty, f"segmented:{tile // 32}").end_bits is None
    with pytest.raises(InputError, match="empty"):
        segmented.segmented_end_bits(with_empty, tile)
    with pytest.raises(InputError, match="multiple of 128"):
        segmented.segmented_end_bits(A, 96)


def test_segmented_tiles_of_a_matrix_without_nonzeros():
    empty = CSRMatrix(np.zeros(0), np.zeros(0, int), np.zeros(8, int), (7, 3))
    np.testing.assert_array_equal(segmented.segmented_tile_rows(empty, 256), [0, 7])
    with pytest.raises(InputError):
        segmented.segmented_tile_rows(empty, 0)


def test_spla_info_shows_the_segmented_tiles_when_auto_runs_them(rng, monkeypatch):
    from spla import analysis

    monkeypatch.setitem(rules.AUTO_RULE, "irregular", "segmented")
    A = _matrix([3] * 200 + [1000] + [0, 0] + [5] * 100, 2000, rng)  # one row across 4+ tiles
    mapping = analysis.analyze(A)["mappings"]["auto"]
    summary = mapping["plan"]
    tile = 32 * segmented.segmented_default(A.dtype)
    assert summary["kernel"] == "segmented" and mapping["groups"] == -(-A.nnz // tile)
    assert summary["counted_rows"] == 1 and summary["cut_rows"] >= 1
    assert mapping["max_work"] <= tile + 303 and "auto runs segmented" in mapping["unit"]


def test_spla_info_shows_the_staged_tiles_when_auto_runs_them(rng, monkeypatch):
    from spla import analysis

    monkeypatch.setitem(rules.AUTO_RULE, "irregular", "staged")
    A = _matrix([3] * 2000 + [9000] + [0, 0] + [5] * 1000, 20000, rng)  # one row across 3+ tiles
    mapping = analysis.analyze(A.astype(np.float32))["mappings"]["auto"]
    summary = mapping["plan"]
    tile = segmented.STAGED_THREADS * segmented.staged_default(np.float32, A.nnz)
    assert summary["kernel"] == "staged" and summary["tile"] == tile and mapping["groups"] == -(-A.nnz // tile)
    assert summary["counted_rows"] == 1 and "one block of 256 threads each" in mapping["unit"]
    assert "auto runs staged" in mapping["unit"]
    assert f"{summary['cut_rows']} rows cross a tile edge, added in the kernel (one launch)" in mapping["unit"]
    monkeypatch.setattr(segmented, "STAGED_ONE_LAUNCH_CUT", summary["cut_rows"] - 1)
    assert "added by a second launch" in analysis.analyze(A.astype(np.float32))["mappings"]["auto"]["unit"]
    assert auto_line(rules.describe_choice(A)).startswith("auto runs   staged:4:")  # few tiles: the smallest T
    assert "columns read as 2-byte offsets" in mapping["unit"]  # 20,000 columns: every tile fits
    assert "2-byte" not in analysis.analyze(A.astype(np.float64))["mappings"]["auto"]["unit"]  # float32 only
    monkeypatch.setattr(segmented, "STAGED_NARROW", ())
    assert "2-byte" not in analysis.analyze(A.astype(np.float32))["mappings"]["auto"]["unit"]
    assert "values not read" not in mapping["unit"]  # random values
    ones = CSRMatrix(np.ones(A.nnz), A.indices, A.indptr, A.shape)
    for dtype in (np.float32, np.float64):
        unit = analysis.analyze(ones.astype(dtype))["mappings"]["auto"]["unit"]
        assert "; values not read (every value is 1)" in unit and "auto runs staged" in unit
    monkeypatch.setattr(segmented, "STAGED_UNIFORM", ("float32",))
    assert "values not read" not in analysis.analyze(ones.astype(np.float64))["mappings"]["auto"]["unit"]


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_narrow_columns_take_tiles_spanning_under_65536_columns(index_dtype):
    """Tile t's smallest column and each column's offset from it, where every tile (the last one
    partial) spans at most 65,535 columns; None from 65,536 on, and for no nonzeros."""
    span = segmented.NARROW_SPAN
    indices = np.array([7, 7 + span - 1, 9, 100, 3 * span, 3 * span + 5, 2 * span], dtype=index_dtype)
    offsets, tile_cols = segmented.narrow_columns(indices, 2)
    np.testing.assert_array_equal(tile_cols, [7, 9, 3 * span, 2 * span])
    assert tile_cols.dtype == index_dtype and offsets.dtype == np.uint16
    np.testing.assert_array_equal(offsets, [0, span - 1, 0, 91, 0, 5, 0])
    np.testing.assert_array_equal(np.repeat(tile_cols, 2)[:7] + offsets, indices)
    indices[1] += 1  # the first tile spans 65,536
    assert segmented.narrow_columns(indices, 2) is None
    assert segmented.narrow_columns(indices, 1) is not None  # a column a tile: no span at all
    assert segmented.narrow_columns(np.zeros(0, dtype=index_dtype), 2) is None


# ------------------------------------------------------- adaptive2 layout
def test_adaptive2_plan_paths_order_and_product(rng):
    A = _mixed(rng)
    lengths = np.diff(A.indptr)
    plan = adaptive.plan_for(A, **adaptive.ADAPTIVE2_THRESHOLDS)  # the rows path up to 1024 (a large plan's)
    t = plan.thresholds
    assert t.warp_max == adaptive.ADAPTIVE2_THRESHOLDS["warp_max"] and plan.dense_rows.size == 0
    rows = plan.bin("rows").rows
    assert ((lengths[rows] > t.stream_max) & (lengths[rows] <= t.warp_max)).all()
    assert (lengths[plan.bin("block").rows] > t.warp_max).all()
    listed = plan.row_list[: rows.size]
    assert sorted(listed.tolist()) == rows.tolist(), "the row list holds exactly the rows path"
    assert (np.diff(lengths[listed]) <= 0).all(), "row list sorted longest first"
    # a grid shorter than TAIL_BLOCKS: every heavy descriptor is in the tail, so all run first
    kinds = plan.blocks[: plan.n_main_blocks, adaptive.KIND]
    assert plan.n_main_blocks < adaptive.TAIL_BLOCKS
    heavy = (kinds <= adaptive.KIND_BLOCK) | (kinds == adaptive.KIND_ROWS)
    assert heavy[: heavy.sum()].all()
    x = rng.uniform(-1, 1, A.n_cols)
    y, writes = execute(plan, A, x)
    assert (writes == 1).all()
    np.testing.assert_allclose(y, A.to_scipy() @ x, rtol=1e-12, atol=1e-12)
    s = plan.summary()
    assert s["paths"]["rows"]["rows"] == rows.size and sum(p["nnz"] for p in s["paths"].values()) == A.nnz
    assert s["blocks"] == plan.n_main_blocks and s["block_nnz_max"] <= t.chunk * 8


def test_adaptive2_small_plan_gives_its_longest_rows_a_block(rng, monkeypatch):
    """In a plan of at most SMALL_PLAN_BLOCKS descriptors, rows over SMALL_PLAN_WARP_MAX leave the
    rows path (32 lanes: a long chain of gathers) for a block each; larger plans, and plans without
    such rows, keep adaptive2's thresholds."""
    A = _mixed(rng)
    lengths = np.diff(A.indptr)
    full = adaptive.plan_for(A, **adaptive.ADAPTIVE2_THRESHOLDS)
    assert full.n_main_blocks <= adaptive.SMALL_PLAN_BLOCKS
    assert (lengths[full.bin("rows").rows] > adaptive.SMALL_PLAN_WARP_MAX).any()
    plan = adaptive.plan2_for(A)
    assert plan.thresholds.warp_max == adaptive.SMALL_PLAN_WARP_MAX and plan.dense_rows.size == 0
    assert (lengths[plan.bin("rows").rows] <= adaptive.SMALL_PLAN_WARP_MAX).all()
    moved = np.setdiff1d(full.bin("rows").rows, plan.bin("rows").rows)
    assert moved.size and np.isin(moved, plan.bin("block").rows).all()
    x = rng.uniform(-1, 1, A.n_cols)
    y, writes = execute(plan, A, x)
    assert (writes == 1).all()
    np.testing.assert_allclose(y, A.to_scipy() @ x, rtol=1e-12, atol=1e-12)
    # a larger plan keeps the rows path (a fresh copy: plans are cached on the matrix)
    monkeypatch.setattr(adaptive, "SMALL_PLAN_BLOCKS", full.n_main_blocks - 1)
    assert adaptive.plan2_for(A.copy()).thresholds.warp_max == adaptive.ADAPTIVE2_THRESHOLDS["warp_max"]
    # ... and so does a small one without rows over SMALL_PLAN_WARP_MAX
    monkeypatch.undo()
    short = _matrix([3] * 500 + [300] * 5, 2000, rng)
    assert adaptive.plan2_for(short) is adaptive.plan_for(short, **adaptive.ADAPTIVE2_THRESHOLDS)


@pytest.mark.parametrize("tail", [25, 60])
def test_adaptive2_descriptors_run_in_row_order_but_heavy_ones_leave_the_tail(rng, monkeypatch, tail):
    A = _mixed(rng)
    thresholds = adaptive.Thresholds(**adaptive.ADAPTIVE2_THRESHOLDS)

    def main_blocks(tail_blocks):
        monkeypatch.setattr(adaptive, "TAIL_BLOCKS", tail_blocks)
        plan = adaptive.build_plan(A, thresholds)
        return plan, plan.blocks[: plan.n_main_blocks]

    plan, in_row_order = main_blocks(0)
    first_row = in_row_order[:, adaptive.ROW_BEGIN].copy()
    listed = in_row_order[:, adaptive.KIND] == adaptive.KIND_ROWS
    first_row[listed] = plan.row_list[first_row[listed]]  # a rows-path block: its first listed row
    assert (np.diff(first_row) >= 0).all()
    kinds = in_row_order[:, adaptive.KIND]
    heavy = (kinds <= adaptive.KIND_BLOCK) | (kinds == adaptive.KIND_ROWS)
    late = heavy & (np.arange(kinds.size) >= kinds.size - tail)
    assert late.any(), "the test matrix puts heavy rows near its end"
    plan, main = main_blocks(tail)
    np.testing.assert_array_equal(main, np.concatenate([in_row_order[late], in_row_order[~late]]))
    y, writes = execute(plan, A, rng.uniform(-1, 1, A.n_cols))
    assert (writes == 1).all()


def test_adaptive2_rows_widths_and_block_sizes(rng):
    lengths = list(rng.integers(0, 17, 300)) + list(range(17, 300)) + [3000]
    A = _matrix(lengths, 4000, rng)
    plan = adaptive.plan_for(A, stream_max=16, warp_max=2048, dense_threshold=2.0)
    desc = plan.blocks[plan.blocks[:, adaptive.KIND] == adaptive.KIND_ROWS]
    lens = np.diff(A.indptr)
    for begin, end, _, width in desc.tolist():
        block_rows = plan.row_list[begin:end]
        assert width == adaptive.rows_width(lens[block_rows].max())
        assert end - begin <= adaptive.ADAPTIVE_THREADS // width
    assert set(desc[:, 3].tolist()) == {8, 16, 32}
    y, writes = execute(plan, A, np.ones(A.n_cols))
    assert (writes == 1).all()


def test_adaptive2_routes_dense_rows_as_sparse_and_splits_them(rng):
    """Round 1's pathology: 2 dense rows of 17k nnz went to a 2-warp GEMV. adaptive2's plan splits them."""
    rows = [list(range(1000, 18000)), list(range(1200, 18100))] + [4] * 3000
    A = _matrix(rows, 20000, rng)
    assert adaptive.plan_for(A).dense_rows.tolist() == [0, 1]  # the measured adaptive plan: dense panel
    plan = adaptive.plan2_for(A)
    assert plan.dense_rows.size == 0 and plan.bin("split").rows.tolist() == [0, 1]
    split = plan.blocks[plan.blocks[:, adaptive.KIND] < 0]
    assert split.shape[0] == 2 * -(-17000 // plan.thresholds.chunk)
    y, writes = execute(plan, A, np.ones(A.n_cols))
    assert (writes == 1).all()
    np.testing.assert_allclose(y, A.to_scipy() @ np.ones(A.n_cols))


def test_warp_max_is_checked(rng):
    A = _mixed(rng, n_rows=50)
    with pytest.raises(InputError, match="warp_max"):
        adaptive.plan_for(A, warp_max=100)  # not above stream_max
    with pytest.raises(InputError, match="warp_max"):
        adaptive.plan_for(A, warp_max=10**6)  # above chunk


def test_mid_size_graphs_run_staged_and_local_rows_do_not():
    """Past mid_nnz a power law of web-like columns (near share 0.22) runs staged; short local rows
    with a few dense ones (gen:hugerows, near share 0.79), which stream, keep adaptive2."""
    graph = io.load("gen:powerlaw:130000:8", cache=False)
    local = io.load("gen:hugerows:120000:20:5000", cache=False)
    smaller = io.load("gen:powerlaw:45000:9", cache=False)  # 405k: staged in one launch since session 25
    for A in (graph, local, smaller):
        assert rules.AUTO.mid_nnz <= A.nnz < rules.AUTO.large_nnz
    for A in (graph, smaller):
        assert rules.describe_choice(A)["class"] == "irregular-mid" and rules.choose_kernel(A) == "staged"
    assert near_share(graph) < rules.AUTO.mid_near <= near_share(local)
    assert rules.describe_choice(local)["class"] == "irregular" and rules.choose_kernel(local) == "adaptive2"
    # the near share the rule read is reported beside the class
    line = auto_line(rules.describe_choice(graph))
    assert line.endswith(f"(class irregular-mid, near share {near_share(graph):.2f})"), line
    small = io.load("gen:powerlaw:5000:4", cache=False)  # under mid_nnz, segmented: nothing samples it
    choice = rules.describe_choice(small)
    assert choice["kernel"] == "segmented" and "near_share" not in choice and "near share" not in auto_line(choice)


def _scattered_rows(lengths, n_cols, rng):
    """CSR of rows of these lengths (at most 32), entry j of a row in the j-th 32nd of the
    columns at random: sorted, distinct, scattered; fast for many rows."""
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    position = np.arange(indptr[-1]) - np.repeat(indptr[:-1], lengths)
    stride = n_cols // 32
    indices = position * stride + rng.integers(0, stride, indptr[-1])
    return CSRMatrix(rng.uniform(-1, 1, indptr[-1]), indices.astype(np.int64), indptr, (len(lengths), n_cols))


def test_tiny_rows_take_a_thread_each_from_short_rows_many_rows(rng):
    """Rows of 2-3 entries, many of them: scalar (vector's 2-lane groups read them an entry at a
    time); the same rows too few to fill the GPU keep warp, and one row past tiny_max keeps vector."""
    t = rules.AUTO
    lengths = rng.integers(2, 4, t.short_rows)
    tiny = _scattered_rows(lengths, 2000, rng)
    assert row_stats(tiny).mean <= t.tiny_mean
    assert rules.describe_choice(tiny)["class"] == "short-tiny" and rules.choose_kernel(tiny) == "scalar"
    few = _scattered_rows(lengths[: t.short_rows // 2], 2000, rng)
    assert rules.choose_kernel(few) == rules.AUTO_RULE["short-few-rows"]
    one_long = _scattered_rows(np.append(lengths[:-1], t.tiny_max + 1), 2000, rng)
    assert row_stats(one_long).mean <= t.tiny_mean
    assert rules.describe_choice(one_long)["class"] == "short"
    at_edge = dataclasses.replace(row_stats(tiny), mean=t.tiny_mean, max=t.tiny_max)
    assert rules.matrix_class(at_edge, 4, scattered) == "short-tiny"
    assert rules.matrix_class(dataclasses.replace(at_edge, mean=t.tiny_mean + 0.01), 4, scattered) == "short"


def test_large_rows_of_irregular_length_run_staged_whatever_their_longest_row():
    """Bimodal rows of 2 and 40 (cv > 1, none past short_max): vector below large_nnz, staged from it."""
    t = rules.AUTO
    bimodal = RowStats(n_rows=3_000_000, nnz=51_554_207, mean=17.18, std=18.6, cv=1.08, max=40, empty=0)
    assert bimodal.max <= t.short_max and bimodal.cv > t.irregular_cv
    assert rules.matrix_class(bimodal, 2, scattered) == "irregular-large"
    small = dataclasses.replace(bimodal, n_rows=200_000, nnz=3_436_000)
    assert rules.matrix_class(small, 2, scattered) == "medium"
    regular = dataclasses.replace(bimodal, cv=t.irregular_cv)
    assert rules.matrix_class(regular, 2, scattered, x_bytes=t.cached_x_bytes) == "medium"


def close_columns():
    """A near share at the fitted edge: neighbouring columns close (block-dense, stencils)."""
    return rules.AUTO.mid_near


def test_large_regular_rows_over_scattered_columns_run_tile_kernels():
    """From large_nnz, regular rows whose columns are scattered over an x past cached_x_bytes run
    segmented, past staged_x_bytes staged (after dia and band) unless 4 entries fill a pack and rows
    average packed_mean or more (segmented); a small x, columns close (near share from
    regular_near) or a smaller matrix keep the row kernels."""
    t = rules.AUTO
    assert t.cached_x_bytes < t.staged_x_bytes
    knn = RowStats(n_rows=4_000_000, nnz=40_000_000, mean=10.0, std=0.0, cv=0.0, max=10, empty=0)
    assert rules.matrix_class(knn, 2, scattered, x_bytes=t.staged_x_bytes + 1) == "regular-large"
    assert rules.matrix_class(knn, 4, scattered, x_bytes=t.staged_x_bytes) == "regular-large-l2"
    assert rules.matrix_class(knn, 4, scattered, x_bytes=t.cached_x_bytes + 1) == "regular-large-l2"
    assert rules.AUTO_RULE["regular-large"] == "staged" and rules.AUTO_RULE["regular-large-l2"] == "segmented"
    assert rules.matrix_class(knn, 4, scattered, x_bytes=t.cached_x_bytes) == "short"
    # past staged_x_bytes, rows of packed_mean and more in 4-entry packs (float32, int32) run segmented
    assert rules.matrix_class(knn, 4, scattered, x_bytes=16_000_000) == "regular-large-packed"
    assert rules.AUTO_RULE["regular-large-packed"] == "segmented"
    assert rules.matrix_class(knn, 2, scattered, x_bytes=16_000_000) == "regular-large"
    shorter = dataclasses.replace(knn, nnz=27_999_991, mean=27_999_991 / 4_000_000, max=7)
    assert shorter.mean < t.packed_mean
    assert rules.matrix_class(shorter, 4, scattered, x_bytes=16_000_000) == "regular-large"
    at_cut = dataclasses.replace(knn, nnz=28_000_000, mean=t.packed_mean, max=7)
    assert rules.matrix_class(at_cut, 4, scattered, x_bytes=16_000_000) == "regular-large-packed"
    # ... unless neighbouring columns are close in packed_near of pairs or more (local rows within a
    # few thousand columns: staged 1.06-1.27x segmented on set 21, session 26)
    for near, klass in ((t.packed_near, "regular-large"), (np.nextafter(t.packed_near, 0), "regular-large-packed")):
        assert rules.matrix_class(knn, 4, lambda near=near: near, x_bytes=16_000_000) == klass
    assert 0 < t.packed_near < t.regular_near
    # ... or a staged tile's columns span at most packed_span (a window of x that stays in L1 beside
    # staged's products); a span not known (a benchmark record without it) keeps them packed
    wider = np.nextafter(t.packed_span, np.inf)
    for span, klass in ((t.packed_span, "regular-large"), (wider, "regular-large-packed")):
        assert rules.matrix_class(knn, 4, scattered, x_bytes=16_000_000, span=lambda span=span: span) == klass
    assert rules.matrix_class(knn, 4, scattered, x_bytes=16_000_000, span=None) == "regular-large-packed"
    # ... or where a tile's gathers read at least packed_lines distinct lines of x (columns scattered
    # over all of x: hardly a line read twice); lines not known keep them packed
    wide = lambda: 16_000_000.0  # noqa: E731
    fewer = np.nextafter(t.packed_lines, 0)
    for lines, klass in ((t.packed_lines, "regular-large"), (fewer, "regular-large-packed")):
        assert rules.matrix_class(knn, 4, scattered, x_bytes=16_000_000, span=wide,
                                  lines=lambda lines=lines: lines) == klass
    assert rules.matrix_class(knn, 4, scattered, x_bytes=16_000_000, span=wide, lines=None) == "regular-large-packed"
    assert 0 < t.packed_lines <= 4096, "a tile holds 4,096 nonzeros"
    assert rules.matrix_class(knn, 2, scattered, x_bytes=16_000_000, span=lambda: 0.0) == "regular-large"
    assert rules.matrix_class(knn, 4, close_columns, x_bytes=16_000_000) == "short"
    # columns often close (rows within a few hundred columns of the diagonal: near share
    # 0.25-0.45) keep the row kernels where rows are longer than a staged thread sums (rows of
    # 120-180: vector 1.06-1.35x staged, set 22) ...
    assert t.regular_near < t.local_near < 1
    long_rows = dataclasses.replace(knn, nnz=600_000_000, mean=150.0, max=180)
    assert long_rows.mean > segmented.STAGED_THREAD_ROW
    for near, klass in ((t.regular_near, "medium"), (np.nextafter(t.regular_near, 0), "regular-large")):
        assert rules.matrix_class(long_rows, 2, lambda near=near: near, x_bytes=8_000_000) == klass
    # ... and take staged up to local_near where a thread sums them (staged 1.07-1.21x vector on
    # sets 20-22)
    local_rows = dataclasses.replace(knn, nnz=48_000_000, mean=48.0, max=60)
    for near, klass in ((t.local_near, "runs"), (np.nextafter(t.local_near, 0), "regular-large")):
        assert rules.matrix_class(local_rows, 2, lambda near=near: near, x_bytes=8_000_000) == klass
    smaller = dataclasses.replace(knn, n_rows=400_000, nnz=t.large_nnz - 1)
    assert rules.matrix_class(smaller, 4, scattered, x_bytes=16_000_000) == "short"
    # structures first: a large stencil that dia takes keeps dia
    for x in (t.cached_x_bytes + 1, 16_000_000):
        assert rules.rule_choice(knn, 4, scattered, lambda name: name == "dia", x_bytes=x) == "dia"
    assert rules.rule_choice(knn, 2, scattered, lambda name: False, x_bytes=16_000_000) == "staged"
    assert rules.rule_choice(knn, 4, scattered, lambda name: False, x_bytes=16_000_000) == "segmented"


def test_large_rows_of_column_runs_run_staged():
    """Large regular rows of short_mean to STAGED_THREAD_ROW on average whose neighbouring columns
    are close too often for regular-large's gates (runs of consecutive columns, dense blocks) run
    staged over an x past staged_x_bytes; shorter or longer rows, a smaller x or a smaller matrix
    keep the row kernels, and a structure dia or band finds comes first."""
    t = rules.AUTO
    runs = RowStats(n_rows=1_200_000, nnz=38_400_000, mean=32.0, std=0.5, cv=0.02, max=32, empty=0)
    big_x = t.staged_x_bytes + 1
    for near in (t.local_near, 0.9, 1.0):
        assert rules.matrix_class(runs, 4, lambda near=near: near, x_bytes=big_x) == "runs"
    assert rules.AUTO_RULE["runs"] == "staged"
    assert rules.rule_choice(runs, 4, close_columns, lambda name: False, x_bytes=big_x) == "staged"
    assert rules.rule_choice(runs, 4, close_columns, lambda name: name == "band", x_bytes=big_x) == "band"
    # an x in L2 (segmented's regular-large-l2 is for scattered columns), a smaller matrix, rows a
    # staged thread does not sum, and short rows keep their classes
    assert rules.matrix_class(runs, 4, close_columns, x_bytes=t.staged_x_bytes) == "medium"
    assert rules.matrix_class(dataclasses.replace(runs, nnz=t.large_nnz - 1), 4, close_columns,
                              x_bytes=big_x) == "medium"
    longer = dataclasses.replace(runs, nnz=180_000_000, mean=150.0, max=180)
    assert longer.mean > segmented.STAGED_THREAD_ROW
    assert rules.matrix_class(longer, 4, close_columns, x_bytes=big_x) == "medium"
    short = dataclasses.replace(runs, nnz=9_600_000, mean=8.0, max=8)
    assert rules.matrix_class(short, 4, close_columns, x_bytes=big_x) == "short"


def test_auto_classes_of_the_unaligned_corpus_families():
    """The rule on real matrices (not row statistics alone): x, the near share and the tiles are
    read from A. Rows of 5-15 over a square x of 4 MB run staged (float32's packed rows too: their
    tiles read about 3,600 lines of x), over 60,000 columns (240-480 KB) segmented, rows of 8 over
    columns of skewed popularity segmented in float32 (about 2,600 lines: hot columns read twice),
    and rows of 1-4 over 2,000 columns a thread each."""
    from spla.bench import corpus

    nnz = 5_000_000
    assert nnz >= rules.AUTO.large_nnz
    for name, dtype, klass, kernel in (("random-width", np.float64, "regular-large", "staged"),
                                       ("random-width", np.float32, "regular-large", "staged"),
                                       ("zipf-columns", np.float32, "regular-large-packed", "segmented"),
                                       ("random-width-60k", np.float64, "regular-large-l2", "segmented"),
                                       ("random-width-60k", np.float32, "regular-large-l2", "segmented"),
                                       ("tiny-narrow", np.float32, "short-tiny", "scalar")):
        A = corpus.build(name, nnz, dtype=dtype)
        choice = rules.describe_choice(A)
        assert (choice["class"], choice["kernel"].split(":")[0]) == (klass, kernel), (name, dtype)
    assert rules.x_bytes_of(corpus.build("random-width-60k", 20_000, dtype=np.float32)) == 60_000 * 4


def test_auto_rule_is_one_table():
    assert set(rules.AUTO_RULE) == {"wide", "long", "huge", "irregular-large", "irregular-narrow", "irregular-mid",
                                    "irregular-short", "irregular", "regular-large", "regular-large-packed",
                                    "regular-large-l2", "runs", "short",
                                    "short-tiny", "short-few-rows", "medium"}
    assert all(k in rules.KERNELS for k in rules.AUTO_RULE.values())
