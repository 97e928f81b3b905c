"""Run-length encoded columns (spla.planning.rle) on the host: the runs give back every column
index of any CSR matrix, and where auto, the tuner and the tuning cache look for them."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import block_rows

from spla import CSRMatrix
from spla.bench import corpus
from spla.cli.spmv import auto_line
from spla.io import generators
from spla.planning import rle, structured, tune
from spla.planning.spmv import band_lanes, describe_choice, parse_kernel, plan_spmv, rle_lanes, rule_kernel
from spla.planning.stats import run_share


def _columns_from(found: rle.Structure, A) -> np.ndarray:
    """Every entry's column as the kernel computes it: its run's first column plus its place in the run."""
    lengths = np.diff(found.run_start)
    within = np.arange(A.nnz) - np.repeat(found.run_start[:-1], lengths)
    return np.repeat(found.run_col, lengths) + within


def _blocks(n_block_rows: int, size: int, per_row: int) -> CSRMatrix:
    """conftest.block_rows as a CSRMatrix: rows made of runs of ``size`` consecutive columns."""
    return CSRMatrix.from_scipy(block_rows(n_block_rows, size, per_row))


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64], ids=["int32", "int64"])
@pytest.mark.parametrize("make", [
    lambda: _blocks(300, 4, 5),
    lambda: corpus.build("block-sparse", 50_000),
    lambda: CSRMatrix.from_scipy(sp.random(400, 900, density=0.02, format="csr", random_state=3)),  # runs of one
    lambda: generators.banded(300, 5),
    lambda: CSRMatrix(np.ones(9), np.array([3, 4, 5, 6, 0, 1, 1, 7, 2]), np.array([0, 3, 3, 6, 9]), (4, 8)),
], ids=["blocks", "block-sparse", "scattered", "band", "crossing-unsorted-duplicates"])
def test_runs_give_back_every_index(make, index_dtype):
    """Also where a run would continue into the next row (3, 4, 5 | 6), across an empty row, in a
    row out of order (6, 0, 1) and over a duplicate (1, 1, 7, 2): the encoding needs no sorted rows."""
    made = make()
    A = CSRMatrix(made.data, made.indices.astype(index_dtype), made.indptr.astype(index_dtype), made.shape)
    found = rle.structure(A)
    assert isinstance(found, rle.Structure), found
    for name in ("run_ptr", "run_start", "run_col"):
        assert getattr(found, name).dtype == A.indices.dtype
    assert found.run_ptr.shape == (A.n_rows + 1,) and found.run_start[-1] == A.nnz
    np.testing.assert_array_equal(_columns_from(found, A), A.indices)
    filled = np.diff(A.indptr) > 0
    # each row with entries starts at the start of its first run, and no run crosses a row's end
    np.testing.assert_array_equal(found.run_start[found.run_ptr[:-1][filled]], A.indptr[:-1][filled])
    assert np.all(np.isin(A.indptr[1:][filled], found.run_start))
    assert rle.structure(A) is found  # cached on A


def test_mean_run_and_the_sampled_share_tell_blocks_from_scattered_columns():
    blocks = _blocks(5000, 16, 4)
    assert rle.mean_run(blocks) >= 16 and rle.applies(blocks)
    twelves = _blocks(5000, 12, 4)  # runs of 12: rle lost to staged on set 38, so auto does not take them ...
    assert run_share(twelves) >= rle.AUTO_MIN_RUN_SHARE and not rle.applies(twelves)
    assert rle.applies(twelves, min_run=rle.TUNE_MIN_RUN)  # ... but the tuner times it there
    scattered = generators.random(20_000, 20)  # 20 uniformly random columns a row
    assert not rle.applies(scattered) and "rle" not in scattered._cache  # the sample spared the pass
    pairs = _blocks(20_000, 2, 4)  # runs of 2: consecutive often enough to look, too short to pay
    assert rle.mean_run(pairs) < rle.TUNE_MIN_RUN and not rle.applies(pairs, min_run=rle.TUNE_MIN_RUN)
    assert not rle.applies(CSRMatrix((5, 3)))
    assert "(8.0 entries a run)" in rle.describe(rle.structure(_blocks(50, 8, 2)))


def test_auto_runs_rle_on_large_blocks_and_band_dia_where_they_apply(monkeypatch):
    small = _blocks(3000, 16, 3)  # 48,000 rows of 48: runs of 16, but 2.3M nonzeros
    assert small.n_rows >= rle.AUTO_MIN_ROWS and small.nnz < rle.AUTO_MIN_NNZ
    assert rule_kernel(small) != "rle" and "rle" not in small._cache  # untimed below 10M: no pass
    monkeypatch.setattr(rle, "AUTO_MIN_NNZ", 10**6)  # (a large matrix's rule, at a test's size)
    blocks = _blocks(3000, 16, 3)
    assert rule_kernel(blocks) == "rle"
    choice = describe_choice(blocks)
    assert choice["kernel"] == "rle" and choice["lanes"] == 4  # float64, 48 a row: about 10 entries a lane
    assert "(16.0 entries a run)" in choice["structure"]
    assert auto_line(choice).startswith("auto runs   rle:4 (")
    assert "rotated" not in choice["structure"]  # float64 keeps the plain loads
    rows_of_32 = _blocks(3000, 16, 2).astype(np.float32)  # float32 rows of 32 entries start on one L1 bank
    assert describe_choice(rows_of_32)["structure"].endswith(", value loads rotated (its rows start on one L1 bank)")
    assert rule_kernel(_blocks(3000, 12, 3)) != "rle"  # runs of 12
    assert rule_kernel(corpus.build("banded-random", 1_200_000)) == "band"  # one run a row: band reads less
    assert rule_kernel(generators.poisson3d(40)) == "dia"
    few = _blocks(1000, 16, 10)  # 2.6M nonzeros in 16,000 rows: a row group a row would leave the GPU idle
    assert rule_kernel(few) != "rle" and "rle" not in few._cache


def test_rle_takes_a_lane_width_and_runs_on_any_matrix():
    scattered = CSRMatrix.from_scipy(sp.random(300, 300, density=0.05, format="csr", random_state=2))
    assert parse_kernel("rle:16") == ("rle", 16)
    plan = plan_spmv(scattered, "rle:16")
    assert plan.family == "rle" and plan.param == 16 and isinstance(plan.structure, rle.Structure)
    assert plan_spmv(scattered.astype(np.float32), "rle").param == 2  # 15 a row of 4 bytes: the narrowest


def test_rle_lanes_count_entries_in_float64_and_bytes_in_float32():
    rows = (16, 26, 33, 51, 72, 99, 120, 400)
    assert [rle_lanes(row, 4) for row in rows] == [band_lanes(row, 4) for row in rows]
    # float64: about 10 entries a lane, a step narrower than band's 8 from rows of about 23 to 28, 45 to 57, ...
    assert [rle_lanes(row, 8) for row in rows] == [2, 2, 4, 4, 8, 8, 16, 32]
    assert [band_lanes(row, 8) for row in rows] == [2, 4, 4, 8, 8, 16, 16, 32]


def test_tuner_times_rle_beside_warp_and_ignores_a_cached_rle_elsewhere(tmp_path):
    blocks = _blocks(3000, 12, 4)  # 1.4M nonzeros of runs of 12: under auto's floor and cut, but the tuner
    # times rle at any size from rle.TUNE_MIN_RUN, and keeps its cached winner
    names = tune.candidates(blocks)
    assert any(n.startswith("rle") for n in names) and any(n.startswith("warp") for n in names)
    assert not any(n.startswith("rle") for n in tune.candidates(generators.poisson2d(30)))
    # one row pointer, two matrices: only the first is made of runs
    spread = CSRMatrix(blocks.data, (blocks.indices * 7) % blocks.n_cols, blocks.indptr, blocks.shape)
    cache = tune.TuneCache(tmp_path / "tune.json")
    cache.store(tune.fingerprint(blocks, "GPU"), {"kernel": "rle:4"})
    assert tune.apply_cached(blocks, "GPU", cache) == "rle:4"
    assert tune.apply_cached(spread, "GPU", cache) is None


def test_refresh_forgets_the_runs_and_running_out_of_memory_is_a_refusal(monkeypatch):
    A = _blocks(100, 4, 3)
    before = rle.structure(A)
    A.indices[:] = A.indices[::-1].copy()
    A.refresh()
    assert rle.structure(A) is not before
    np.testing.assert_array_equal(_columns_from(rle.structure(A), A), A.indices)

    def out_of_memory(xp, A):
        raise MemoryError("no room")

    monkeypatch.setattr(rle, "_detect", out_of_memory)
    monkeypatch.setattr(structured, "is_out_of_memory", lambda exc: isinstance(exc, MemoryError))
    assert "ran out" in rle.structure(_blocks(50, 4, 2)).reason
