"""Column blocks on the CPU: the regrouping (spla.csr_passes.column_blocks, the same array
operations CuPy runs), the blocks' widths, and where auto's rule sends a matrix to blocked.
(What the kernels compute from the regrouped copy: tests/backends/test_kernels_emulated.py.)"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import short_wide

from spla import csr_passes
from spla.csr import CSRMatrix
from spla.planning import blocked, segmented
from spla.planning import spmv as rules
from spla.planning.stats import RowStats


def _pair_sums(Bx, pair_ptr, pairs):
    """Each row's sum of its pairs' rows of B x, in the order given."""
    return np.array([Bx[pairs[pair_ptr[r]:pair_ptr[r + 1]]].sum() for r in range(len(pair_ptr) - 1)])


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("width", [1, 7, 64, 1000])
def test_regrouped_rows_sum_to_each_row(rng, width, index_dtype):
    A = sp.random(40, 1000, density=0.08, format="csr", random_state=rng).tolil()
    A[5, :] = 0  # an empty row
    A = A.tocsr()
    A.indptr, A.indices = A.indptr.astype(index_dtype), A.indices.astype(index_dtype)
    blocks = blocked.n_blocks(1000, width)
    indptr, indices, data, pair_ptr, pairs = csr_passes.column_blocks(A.indptr, A.indices, A.data, blocks, width)
    assert indptr.dtype == indices.dtype == pair_ptr.dtype == pairs.dtype == index_dtype
    B = sp.csr_matrix((data, indices, indptr), shape=(len(indptr) - 1, 1000))
    assert (np.diff(indptr) > 0).all(), "a row for each (block, row) pair that holds entries, no other"
    block_of = B.indices // width
    for i in range(B.shape[0]):  # one block a row, columns in their order; rows in block order
        entries = slice(indptr[i], indptr[i + 1])
        assert (block_of[entries] == block_of[indptr[i]]).all() and (np.diff(B.indices[entries]) > 0).all()
    assert (np.diff(block_of[indptr[:-1]]) >= 0).all()
    for r in range(40):  # row r's pairs: its entries, block by block
        mine = pairs[pair_ptr[r]:pair_ptr[r + 1]]
        assert (np.diff(block_of[indptr[mine]]) > 0).all()
        assert np.array_equal(np.sort(B[mine].indices), A[r].indices)
    assert pair_ptr[6] == pair_ptr[5]  # the empty row has none
    x = rng.standard_normal(1000)
    assert np.allclose(_pair_sums(B @ x, pair_ptr, pairs), A @ x)


def test_regrouping_keeps_the_order_of_unsorted_rows():
    """Columns out of order in a row: a block's entries keep the order they had (a stable sort)."""
    indptr = np.array([0, 4, 6])
    indices = np.array([9, 1, 8, 0, 5, 2])
    data = np.arange(1.0, 7.0)
    out_ptr, out_indices, out_data, pair_ptr, pairs = csr_passes.column_blocks(indptr, indices, data, 2, 5)
    assert out_ptr.tolist() == [0, 2, 3, 5, 6]  # (block 0: row 0, row 1), (block 1: row 0, row 1)
    assert out_indices.tolist() == [1, 0, 2, 9, 8, 5]
    assert out_data.tolist() == [2.0, 4.0, 6.0, 1.0, 3.0, 5.0]
    assert pair_ptr.tolist() == [0, 2, 4] and pairs.tolist() == [0, 2, 1, 3]


def test_regrouping_a_matrix_without_entries():
    out = csr_passes.column_blocks(np.zeros(4, np.int32), np.zeros(0, np.int32), np.zeros(0), 3, 5)
    assert [a.tolist() for a in out] == [[0], [], [], [0, 0, 0, 0], []]


def test_blocks_are_equal_and_at_most_the_widest():
    widest = blocked.BLOCK_COLUMNS
    assert blocked.n_blocks(1) == blocked.n_blocks(widest) == 1
    assert blocked.n_blocks(widest + 1) == 2 and blocked.block_width(widest + 1) == widest // 2 + 1
    for n_cols in (widest * 3, 20_000_000, 123_456_789):
        width = blocked.block_width(n_cols)
        assert width <= widest and blocked.n_blocks(n_cols, width) == blocked.n_blocks(n_cols)
        assert n_cols - (blocked.n_blocks(n_cols) - 1) * width > 0  # no block empty


def test_regrouped_is_cached_on_the_matrix(rng, monkeypatch):
    monkeypatch.setattr(blocked, "BLOCK_COLUMNS", 100)
    A = CSRMatrix.from_scipy(sp.random(30, 450, density=0.1, format="csr", random_state=rng))
    found = blocked.regrouped(A)
    B = found.matrix
    assert found.width == 90  # 5 blocks of 90, not 4 of 100 and a sliver
    assert B.n_cols == 450 and B.nnz == A.nnz and B.dtype == A.dtype
    assert blocked.regrouped(A) is found
    x = rng.standard_normal(450)
    assert np.allclose(_pair_sums(B.to_scipy() @ x, found.pair_ptr, found.pairs), A.to_scipy() @ x)
    monkeypatch.setattr(blocked, "BLOCK_COLUMNS", 200)  # another width: built again
    assert blocked.regrouped(A).width == 150


def test_auto_blocks_where_the_predicted_gain_reaches_the_cut():
    t = rules.AUTO
    never = lambda: pytest.fail("the near share is not asked")  # noqa: E731
    rows = RowStats(n_rows=800, nnz=8000, mean=10.0, std=0.0, cv=0.0, max=10, empty=0)

    def wide(x_bytes=t.blocked_x_bytes, blocks=10, gain=lambda: t.blocked_gain):
        return rules.matrix_class(rows, 4, never, x_bytes=x_bytes, blocks=blocks, gain=gain) == "wide"

    assert wide() and rules.AUTO_RULE["wide"] == "blocked"
    assert not wide(gain=lambda: t.blocked_gain - 0.01)
    assert not wide(x_bytes=t.blocked_x_bytes - 1, gain=lambda: pytest.fail("the gain is not asked of a small x"))
    assert not wide(blocks=1, gain=lambda: pytest.fail("the gain is not asked of one block"))
    assert not wide(gain=None)  # a benchmark record without it (scripts/fit_auto.py)


def test_traffic_counts_misses_sectors_and_pairs(rng, small_l2):
    """traffic() against a count by hand: CSR order's misses are the slope of the sampled windows'
    footprint (distinct 64-byte lines of x among their first w nonzeros, averaged) where it and the
    nonzeros' own bytes fill L2; block order reads the distinct sectors of all of A, which make its
    distinct lines; the pairs are the (row, block) pairs of the windows."""
    A = short_wide(rng, 600, 12, 9_000_000, pool=3000)
    found = blocked.traffic(A)
    assert blocked.traffic(A) is found  # cached
    columns, rows = A.indices, np.repeat(np.arange(A.n_rows), np.diff(A.indptr))
    entry = 8  # a float32 value and an int32 index
    window = 16_384 // entry
    lengths = [w for w in sorted({2 ** k for k in range(4, 12)} | {3 * 2 ** k for k in range(3, 10)}) if w < window]
    lengths.append(window)
    starts = np.unique(np.linspace(0, A.nnz - window, blocked.FOOTPRINT_SAMPLES).astype(np.int64))
    footprint = [np.mean([len(set(columns[s:s + w] // 16)) for s in starts]) for w in lengths]
    at = next(i for i, w in enumerate(lengths) if entry * w + 64 * footprint[i] >= 16_384)
    assert at > 0
    assert found.csr == pytest.approx((footprint[at] - footprint[at - 1]) / (lengths[at] - lengths[at - 1]))
    width = blocked.block_width(A.n_cols)
    pairs = [len({(r, c // width) for r, c in zip(rows[s:s + window], columns[s:s + window])}) for s in starts]
    assert found.pairs == pytest.approx(sum(pairs) / (window * starts.size))
    assert found.blocked == pytest.approx(np.unique(columns // 8).size / A.nnz)
    assert found.lines == pytest.approx(np.unique(columns // 16).size / A.nnz)
    assert blocked.predicted_gain(A) == pytest.approx(
        (entry + blocked.MISS_BYTES * found.csr)
        / (entry + blocked.SECTOR_BYTES * found.blocked + blocked.PAIR_BYTES * found.pairs))
    assert blocked.predicted_gain(CSRMatrix((5, 7))) == 1.0


def test_footprint_slope_where_l2_fills():
    """csr_misses reads the footprint's slope between the two lengths around the fill point, the first
    length's average where L2 fills before it, and every line once where all of A fits."""
    lengths = [100, 200, 400]
    footprint = np.array([50.0, 90.0, 120.0])  # bytes filled (entry 8, lines of 64): 4,000, 7,360, 10,880
    for l2, want in ((7_000, 40 / 100), (3_000, 0.5), (20_000, 120 / 1000)):
        with pytest.MonkeyPatch.context() as m:
            m.setattr(blocked, "L2_BYTES", l2)
            assert blocked.csr_misses(footprint, lengths, 8, 1000) == pytest.approx(want)


def test_first_reads_counts_distinct_values_of_each_prefix(rng):
    keys = rng.integers(0, 50, 1000)
    lengths = [1, 10, 100, 999, 1000]
    assert blocked.first_reads(keys, lengths, np).tolist() == [len(set(keys[:w])) for w in lengths]


def test_no_gain_where_csr_order_reads_no_line_again(rng, small_l2):
    """Columns read once each (every one distinct): CSR order misses each line once, as block order
    reads it, so blocking has nothing to save; and a band along the diagonal (a stripe) the same."""
    once = short_wide(rng, 600, 12, 9_000_000)
    assert blocked.traffic(once).csr == pytest.approx(blocked.traffic(once).lines, rel=0.05)
    assert blocked.predicted_gain(once) == 0.0
    n = 200_000
    stripe = CSRMatrix.from_scipy(sp.diags([np.ones(n - 1), np.ones(n), np.ones(n - 1)], [-1, 0, 1]).tocsr())
    assert blocked.predicted_gain(stripe) == 0.0


def test_auto_runs_blocked_on_a_short_wide_matrix(rng, small_l2):
    """The rule reads the blocks and the predicted gain from A: rows drawn from scattered columns that
    many rows read far apart, over an x at the cut, take blocked, and describe_choice says why;
    the same rows of columns read once each do not."""
    t = rules.AUTO
    n_cols = -(-t.blocked_x_bytes // 4)  # float32
    A = short_wide(rng, 600, 12, n_cols, pool=3000)
    assert blocked.predicted_gain(A) >= t.blocked_gain
    assert rules.rule_kernel(A) == "blocked"
    info = rules.describe_choice(A)
    blocks = blocked.n_blocks(n_cols)
    assert info["class"] == "wide" and info["blocks"] == blocks and info["block_columns"] == blocked.block_width(n_cols)
    assert info["predicted_gain"] == blocked.predicted_gain(A)
    plan = rules.plan_spmv(A, "auto")
    assert plan.family == "blocked" and plan.inner.family == "staged" and plan.regrouped.matrix.nnz == A.nnz
    assert rules.rule_kernel(short_wide(rng, 600, 12, n_cols)) != "blocked"


def test_auto_falls_back_to_staged_where_the_copy_does_not_fit(rng, monkeypatch):
    monkeypatch.setattr(blocked, "BLOCK_COLUMNS", 1000)
    A = CSRMatrix.from_scipy(sp.random(20, 10_000, density=0.06, format="csr", random_state=rng))

    def out_of_memory(*args):
        raise MemoryError("no room for the copy")

    monkeypatch.setattr(csr_passes, "column_blocks", out_of_memory)
    plan = rules.plan_spmv(A, "staged:8")  # what auto falls back to
    A._cache[rules.AUTO_CHOICE_KEY] = "blocked:8"  # as if the rule or a tuning had picked it
    fallback = rules.plan_spmv(A, "auto")
    assert fallback.family == "staged" and fallback.kernel == "auto" and fallback.param == plan.param
    with pytest.raises(MemoryError):  # asked for by name: the error, not another kernel
        rules.plan_spmv(A, "blocked")


def test_auto_drops_the_copy_where_its_plan_does_not_fit(rng, monkeypatch):
    """The copy fits but staged's plan of it does not: auto runs staged on A, and A's cache no longer
    holds the copy (the memory it takes is what ran out)."""
    monkeypatch.setattr(blocked, "BLOCK_COLUMNS", 1000)
    A = CSRMatrix.from_scipy(sp.random(20, 10_000, density=0.06, format="csr", random_state=rng))
    A._cache[rules.AUTO_CHOICE_KEY] = "blocked:8"
    tile_rows = segmented.segmented_tile_rows

    def out_of_memory_on_the_copy(M, tile):
        if M is not A:
            raise MemoryError("no room for the copy's plan")
        return tile_rows(M, tile)

    monkeypatch.setattr(segmented, "segmented_tile_rows", out_of_memory_on_the_copy)
    fallback = rules.plan_spmv(A, "auto")
    assert fallback.family == "staged" and fallback.regrouped is None
    assert blocked.REGROUPED_KEY not in A._cache
    blocked.regrouped(A)
    with pytest.raises(MemoryError, match="copy's plan"):
        rules.plan_spmv(A, "blocked")
    assert blocked.REGROUPED_KEY not in A._cache


def test_spla_info_says_how_auto_blocks(rng, small_l2):
    from spla.cli.spmv import auto_line

    n_cols = -(-rules.AUTO.blocked_x_bytes // 4)
    A = short_wide(rng, 600, 12, n_cols, pool=3000)
    line = auto_line(rules.describe_choice(A))
    assert line.startswith(f"auto runs   blocked:{rules.bound_param(A, 'blocked', None)} ({blocked.n_blocks(n_cols)} "
                           f"blocks of {blocked.block_width(n_cols):,} columns; predicted "
                           f"{blocked.predicted_gain(A):.2f}x staged)")
    assert "(class wide" in line


def test_the_tuner_times_blocked_where_x_is_large_enough(rng):
    from spla.planning import tune

    n_cols = -(-rules.AUTO.blocked_x_bytes // 4)
    over = short_wide(rng, 64, 3, n_cols)  # too few nonzeros for the rule (under a tile): the tuner still times it
    assert "blocked" in tune.candidates(over) and rules.rule_kernel(over) != "blocked"
    under = short_wide(rng, 64, 3, n_cols - 1_000_000)
    assert "blocked" not in tune.candidates(under)
