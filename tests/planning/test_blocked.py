"""Column blocks on the CPU: the regrouping (spla.csr_passes.column_blocks, the same array
operations CuPy runs), the blocks' widths, and where auto's rule sends a matrix to blocked.
(What the kernels compute from the regrouped copy: tests/backends/test_kernels_emulated.py.)"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp

from spla import csr_passes
from spla.csr import CSRMatrix
from spla.planning import blocked
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


def _wide(n_rows: int, entries_a_block: float, blocks: int) -> RowStats:
    mean = entries_a_block * blocks
    return RowStats(n_rows=n_rows, nnz=int(n_rows * mean), mean=mean, std=0.0, cv=0.0, max=int(mean), empty=0)


def test_auto_blocks_rows_of_enough_entries_a_block_over_a_large_x():
    t = rules.AUTO
    never = lambda: pytest.fail("the near share is not asked")  # noqa: E731
    rows = _wide(800, t.blocked_entries, 10)
    spread, local = (lambda: 9.5), (lambda: 1.0)  # a wave's span in blocks' widths
    scattered = lambda: t.blocked_lines  # noqa: E731  (a staged tile's distinct lines of x)

    def wide(stats=rows, x_bytes=t.blocked_x_bytes, blocks=10, wave=spread, lines=scattered):
        return rules.matrix_class(stats, 4, never, x_bytes=x_bytes, blocks=blocks, wave=wave, lines=lines) == "wide"

    assert wide() and rules.AUTO_RULE["wide"] == "blocked"
    assert not wide(stats=dataclasses.replace(rows, nnz=rows.nnz - 1))  # under blocked_entries a block on average
    assert not wide(x_bytes=t.blocked_x_bytes - 1)
    assert not wide(wave=local)  # rows near the diagonal: a wave reads a block's width of x already
    assert not wide(blocks=1, wave=lambda: pytest.fail("the wave is not asked of one block"))
    assert not wide(wave=None)  # a record that predates the wave (scripts/fit_auto.py)
    assert not wide(lines=lambda: t.blocked_lines - 1)  # hot columns: L2 holds most of what a tile gathers
    assert not wide(lines=None)


def _short_wide(rng, n_rows: int, length: int, n_cols: int) -> CSRMatrix:
    """n_rows rows of ``length`` distinct, scattered, sorted columns (float32)."""
    columns = np.sort(rng.choice(n_cols, n_rows * length, replace=False).reshape(n_rows, length), axis=1)
    return CSRMatrix(np.ones(columns.size, np.float32), columns.ravel(), np.arange(n_rows + 1) * length,
                     (n_rows, n_cols))


def test_auto_runs_blocked_on_a_short_wide_matrix(rng):
    """The rule reads the blocks from A's columns: rows spread over an x at the cut, at the cut's
    entries a block, take blocked, and describe_choice says how many blocks. (Two staged tiles of
    nonzeros at least: the lines a tile gathers from are sampled from whole tiles.)"""
    t = rules.AUTO
    n_cols = -(-t.blocked_x_bytes // 4)  # float32
    blocks = blocked.n_blocks(n_cols)
    length = int(np.ceil(t.blocked_entries * blocks))
    n_rows = -(-2 * 4096 // length)
    A = _short_wide(rng, n_rows, length, n_cols)
    assert rules.rule_kernel(A) == "blocked"
    info = rules.describe_choice(A)
    assert info["class"] == "wide" and info["blocks"] == blocks and info["block_columns"] == blocked.block_width(n_cols)
    plan = rules.plan_spmv(A, "auto")
    assert plan.family == "blocked" and plan.inner.family == "staged" and plan.regrouped.matrix.nnz == A.nnz
    assert rules.rule_kernel(_short_wide(rng, n_rows, length - 1, n_cols)) != "blocked"


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


def test_spla_info_says_how_auto_blocks(rng):
    from spla.cli.spmv import auto_line

    t = rules.AUTO
    n_cols = -(-t.blocked_x_bytes // 4)
    blocks = blocked.n_blocks(n_cols)
    A = _short_wide(rng, 4096, int(np.ceil(t.blocked_entries * blocks)) + 1, n_cols)
    line = auto_line(rules.describe_choice(A))
    assert line.startswith(f"auto runs   blocked:{rules.bound_param(A, 'blocked', None)} ({blocks} blocks of "
                           f"{blocked.block_width(n_cols):,} columns; a wave of nonzeros spans ")
    assert "(class wide" in line


def test_a_wave_spans_little_of_x_on_rows_near_the_diagonal(rng, monkeypatch):
    from spla.planning import stats

    monkeypatch.setattr(stats, "WAVE_ENTRIES", 3000)  # waves of 3,000 nonzeros: 1,000 rows of this band
    n = 100_000
    band = CSRMatrix.from_scipy(sp.diags([np.ones(n - 1), np.ones(n), np.ones(n - 1)], [-1, 0, 1]).tocsr())
    assert 800 < stats.wave_span(band) < 1000  # the waves' 5th-95th percentile columns
    scattered = CSRMatrix.from_scipy(sp.random(30_000, n, density=1e-4, format="csr", random_state=rng))
    assert stats.wave_span(scattered) > 0.85 * n
    assert stats.wave_span(CSRMatrix((5, 7))) == 0.0



def test_the_tuner_times_blocked_where_x_is_large_enough(rng):
    from spla.planning import tune

    n_cols = -(-rules.AUTO.blocked_x_bytes // 4)
    over = _short_wide(rng, 64, 3, n_cols)  # too few nonzeros for the rule (under a tile): the tuner still times it
    assert "blocked" in tune.candidates(over) and rules.rule_kernel(over) != "blocked"
    under = _short_wide(rng, 64, 3, n_cols - 1_000_000)
    assert "blocked" not in tune.candidates(under)
