"""Contiguous-row detection (spla.planning.band) on the host: the first columns it keeps give
back every column index, why other matrices are refused, and where auto, the tuner and the
tuning cache look for it."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from spla import CSRMatrix
from spla.bench import corpus
from spla.cli.spmv import auto_line
from spla.errors import KernelError
from spla.io import generators
from spla.planning import band, dia, structured, tune
from spla.planning.spmv import band_lanes, describe_choice, parse_kernel, plan_spmv, rule_kernel


def _band_rows(lengths, first, n_cols, index_dtype=np.int32, rng=None) -> CSRMatrix:
    """Rows ``first[r], first[r] + 1, ...`` of ``lengths[r]`` entries."""
    lengths = np.asarray(lengths, dtype=np.int64)
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    indices = np.concatenate([np.arange(f, f + k) for f, k in zip(first, lengths)] + [np.empty(0, np.int64)])
    values = (rng or np.random.default_rng(0)).uniform(-1, 1, indices.size)
    return CSRMatrix(values, indices.astype(index_dtype), indptr.astype(index_dtype), (len(lengths), n_cols))


def _columns_from(found: band.Structure, A) -> np.ndarray:
    """Every entry's column as the kernel computes it: its row's first column plus its place in the row."""
    lengths = np.diff(A.indptr)
    within = np.arange(A.nnz) - np.repeat(A.indptr[:-1], lengths)
    return np.repeat(found.first, lengths) + within


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64], ids=["int32", "int64"])
@pytest.mark.parametrize("make", [
    lambda d: CSRMatrix.from_scipy(generators.banded(500, 6).to_scipy(), index_dtype=d),
    lambda d: _band_rows([3, 0, 64, 1, 0, 17], [0, 0, 10, 99, 0, 40], 100, d),  # empty rows, one wide row
    lambda d: CSRMatrix.from_scipy(corpus.build("banded-random", 20_000).to_scipy(), index_dtype=d),
    lambda d: CSRMatrix.from_scipy(sp.csr_matrix(np.triu(np.ones((40, 60)))), index_dtype=d),  # skyline
], ids=["band", "empty-rows", "banded-random", "skyline"])
def test_first_columns_give_back_every_index(make, index_dtype):
    A = make(index_dtype)
    found = band.structure(A)
    assert isinstance(found, band.Structure), found
    assert found.first.dtype == A.indices.dtype and found.first.shape == (A.n_rows,)
    np.testing.assert_array_equal(_columns_from(found, A), A.indices)
    assert np.all(found.first[np.diff(A.indptr) == 0] == 0)
    assert band.structure(A) is found and band.applies(A)  # cached on A


def test_explicit_zeros_are_kept_and_empty_matrices_have_nothing_to_read():
    zeros = generators.banded(300, 2).to_scipy().copy()
    zeros.data[::7] = 0.0  # stored, not eliminated: band multiplies them, as CSR does
    assert isinstance(band.structure(CSRMatrix.from_scipy(zeros)), band.Structure)
    empty = CSRMatrix((5, 3))
    found = band.structure(empty)
    assert isinstance(found, band.Structure) and found.first.shape == (5,) and not band.applies(empty)


def test_refusals_say_why():
    gaps = _band_rows([3, 3, 3], [0, 5, 9], 20)
    gaps.indices[4] += 1  # row 1: 5, 7, 7 -> not canonical; make it 5, 7, 8 instead
    gaps.indices[5] += 1
    assert band.structure(gaps).reason == "1 of its rows are not one contiguous run of columns"
    stencil = generators.poisson2d(20)  # rows of two or three runs
    assert "400 of its rows" in band.structure(stencil).reason
    duplicated = CSRMatrix(np.ones(4), np.array([0, 0, 1, 2]), np.array([0, 2, 4]), (2, 3))
    assert "canonical" in band.structure(duplicated).reason
    unsorted = CSRMatrix(np.ones(3), np.array([1, 0, 2]), np.array([0, 3]), (1, 3))
    assert "canonical" in band.structure(unsorted).reason
    with pytest.raises(KernelError, match="kernel='band' needs a matrix whose rows are each one contiguous run"):
        plan_spmv(stencil, "band")


def test_band_takes_a_lane_width_and_its_default_follows_the_rows_bytes():
    A = generators.banded(400, 20).astype(np.float32)  # 41 a row
    assert parse_kernel("band:8") == ("band", 8)
    with pytest.raises(KernelError, match="band and rle take an optional :LANES"):
        parse_kernel("band:3")
    plan = plan_spmv(A, "band")
    assert plan.family == "band" and plan.param == 2  # 164 bytes of float32 values a row: 2 lanes of 64 B
    assert plan_spmv(A.astype(np.float64), "band").param == 4
    assert plan_spmv(A, "band:8").param == 8 and isinstance(plan.structure, band.Structure)
    assert [band_lanes(mean, 4) for mean in (1, 32, 64, 128, 2000)] == [2, 2, 4, 8, 32]


def test_auto_runs_band_on_large_bands_dia_cannot_store():
    random_widths = corpus.build("banded-random", 1_200_000)  # rows of 1..64: dia would pad them 2x
    assert random_widths.n_rows >= band.AUTO_MIN_ROWS
    assert isinstance(dia.structure(random_widths), dia.Refusal)
    assert rule_kernel(random_widths) == "band"
    choice = describe_choice(random_widths)
    assert choice["kernel"] == "band" and choice["lanes"] == 4  # float64, 32.5 a row
    assert auto_line(choice).startswith("auto runs   band:4 (rows of contiguous columns): the rule")
    full = generators.banded(50_000, 16)  # 33 diagonals, 1.6M nonzeros: dia reads no row pointers
    assert rule_kernel(full) == "dia"
    fewer = generators.banded(40_000, 16)  # too few rows for dia's threads (S1), enough for band's lanes
    assert fewer.n_rows < dia.AUTO_MIN_ROWS and rule_kernel(fewer) == "band"
    small = corpus.build("banded-random", 100_000)  # about 3,000 rows
    assert small.n_rows < band.AUTO_MIN_ROWS
    assert rule_kernel(small) != "band" and "band" not in small._cache  # no detection pass with so few rows
    smaller = corpus.build("banded-random", 700_000)  # under 2^20 nonzeros, rows enough (S1)
    assert smaller.nnz < 2**20 and smaller.n_rows >= band.AUTO_MIN_ROWS and rule_kernel(smaller) == "band"
    irregular = generators.from_spec("gen:powerlaw:300000:8:2000")
    assert rule_kernel(irregular) != "band" and "band" not in irregular._cache


def test_tuner_times_band_where_it_applies_and_ignores_a_cached_band_elsewhere(tmp_path):
    names = tune.candidates(corpus.build("banded-random", 30_000))
    assert any(n.startswith("band") for n in names) and not any(n.startswith("warp") for n in names)
    assert not any(n.startswith("band") for n in tune.candidates(generators.poisson2d(30)))
    # one row pointer, two matrices: only the first has contiguous rows
    rows = _band_rows([4] * 500, np.arange(500), 600)
    spread = CSRMatrix(rows.data, rows.indices + np.arange(rows.nnz) % 4, rows.indptr, rows.shape)  # r, r+2, ..
    cache = tune.TuneCache(tmp_path / "tune.json")
    cache.store(tune.fingerprint(rows, "GPU"), {"kernel": "band:4"})
    assert tune.apply_cached(rows, "GPU", cache) == "band:4"
    assert tune.apply_cached(spread, "GPU", cache) is None


def test_refresh_forgets_the_first_columns():
    A = generators.banded(200, 3)
    before = band.structure(A)
    A.indices[0] = 2  # row 0 was 0..3: now 2, 1, 2, 3 (not canonical)
    A.refresh()
    assert isinstance(band.structure(A), band.Refusal) and band.structure(A) is not before


def test_running_out_of_memory_while_detecting_is_a_refusal(monkeypatch):
    def out_of_memory(xp, A):
        raise MemoryError("no room")

    monkeypatch.setattr(band, "_detect", out_of_memory)
    monkeypatch.setattr(structured, "is_out_of_memory", lambda exc: isinstance(exc, MemoryError))
    assert "ran out" in band.structure(generators.banded(100, 2)).reason
