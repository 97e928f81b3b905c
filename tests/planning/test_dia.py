"""DIA structure detection (spla.planning.dia) on the host: which matrices have it, that it
holds the same products as CSR (bit for bit, in CSR's order), why others are refused, and
where auto and the tuner look for it."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from spla import CSRMatrix, csr_passes
from spla.cli.spmv import auto_line
from spla.errors import KernelError
from spla.io import generators
from spla.planning import dia, palette, structured, tune
from spla.planning.spmv import AUTO_RULE, describe_choice, matrix_class, pack_entries, plan_spmv, rule_kernel
from spla.planning.stats import near_share, row_stats


def _dia_product(structure: dia.Structure, n_rows: int, n_cols: int, x: np.ndarray) -> np.ndarray:
    """The kernel's arithmetic in NumPy: diagonals in increasing offset, zeros skipped."""
    assert not np.any(structure.values[:, n_rows:]), "nothing stored past the last row"
    rows = np.arange(n_rows)
    y = np.zeros(n_rows)
    for d, offset in enumerate(structure.offsets):
        values = structure.values[d, :n_rows]
        stored = values != 0
        assert np.all((rows[stored] + offset >= 0) & (rows[stored] + offset < n_cols)), "padding only off the edges"
        y[stored] += values[stored] * x[rows[stored] + offset]
    return y


@pytest.mark.parametrize("make", [lambda: generators.poisson2d(40), lambda: generators.poisson3d(9),
                                  lambda: generators.banded(500, 6),
                                  lambda: CSRMatrix.from_scipy(generators.poisson2d(20).to_scipy()[:300, :]),
                                  lambda: CSRMatrix.from_scipy(sp.diags([1.0, 2.0, 3.0], [0, 5, 17], shape=(200, 230),
                                                                        format="csr"), index_dtype=np.int64)],
                         ids=["poisson2d", "poisson3d", "banded", "rows-of-poisson2d", "rectangular-int64"])
def test_structure_gives_csr_products_bit_for_bit(make, rng):
    A = make()
    found = dia.structure(A)
    assert isinstance(found, dia.Structure), found
    offsets = A.indices.astype(np.int64) - np.repeat(np.arange(A.n_rows), np.diff(A.indptr))
    np.testing.assert_array_equal(found.offsets, np.unique(offsets))
    assert found.stride % dia.STRIDE_ROWS == 0 and A.n_rows <= found.stride < A.n_rows + dia.STRIDE_ROWS
    assert found.values.shape == (found.n_diagonals, found.stride) and found.values.dtype == A.dtype
    assert np.count_nonzero(found.values) == A.nnz
    x = rng.standard_normal(A.n_cols)
    np.testing.assert_array_equal(_dia_product(found, A.n_rows, A.n_cols, x), A.to_scipy() @ x)
    assert dia.structure(A) is found  # cached on A


def test_refusals_say_why():
    random = CSRMatrix.from_scipy(sp.random(400, 400, density=0.05, format="csr", random_state=3))
    assert f"more than {dia.MAX_DIAGONALS} diagonals" in dia.structure(random).reason
    zeros = sp.csr_matrix(generators.poisson2d(10).to_scipy())
    zeros.data[7] = 0.0  # stored, not eliminated
    assert "explicit zeros" in dia.structure(CSRMatrix.from_scipy(zeros)).reason
    sparse_band = sp.diags([np.ones(300), np.where(np.arange(298) % 3 == 0, 1.0, 0.0)], [0, 2], format="csr")
    sparse_band.eliminate_zeros()
    assert "would store" in dia.structure(CSRMatrix.from_scipy(sparse_band)).reason
    duplicated = CSRMatrix(np.ones(4), np.array([0, 0, 1, 1]), np.array([0, 2, 4]), (2, 2))
    assert "canonical" in dia.structure(duplicated).reason
    empty = dia.structure(CSRMatrix((4, 3)))
    assert empty.n_diagonals == 0 and empty.values.shape == (0, dia.STRIDE_ROWS)  # y = beta y, as every kernel gives
    with pytest.raises(KernelError, match=f"kernel='dia' needs .* more than {dia.MAX_DIAGONALS} diagonals"):
        plan_spmv(random, "dia")


def test_a_sample_on_too_many_diagonals_is_refused_before_any_pass_over_all_entries():
    """auto asks most regular matrices it considers (meshes, road networks) and refuses them: the
    sample's own entries decide that, before the canonical-form check and the full offsets pass."""
    mesh = generators.from_spec("gen:random:60000:6")  # rows of 6 over random columns: regular, no diagonals
    assert dia.worth_detecting(row_stats(mesh))
    assert f"more than {dia.MAX_DIAGONALS} diagonals" in dia.structure(mesh).reason
    assert "canonical" not in mesh._cache  # the canonical-form flag was never computed
    stencil = generators.poisson2d(50)
    assert isinstance(dia.structure(stencil), dia.Structure) and "canonical" in stencil._cache


def test_diagonals_the_sample_misses_are_found(rng):
    """One stray entry on a diagonal of its own, and a band whose row length shares a factor with a
    regular sampling stride (33 entries a row: every third diagonal at a stride of 9,765)."""
    stray = generators.poisson2d(200).to_scipy().tolil()
    stray[5, 190] = 1.0
    A = CSRMatrix.from_scipy(stray.tocsr())
    found = dia.structure(A)
    assert found.n_diagonals == 6 and 185 in found.offsets
    x = rng.standard_normal(A.n_cols)
    np.testing.assert_array_equal(_dia_product(found, A.n_rows, A.n_cols, x), A.to_scipy() @ x)
    band = generators.banded(40_000, 16)
    assert dia.structure(band).n_diagonals == 33


def test_auto_looks_for_diagonals_only_in_regular_matrices_of_rows_enough():
    small = generators.poisson2d(200)  # 40,000 rows: too few for a thread's rows to fill the GPU
    assert small.n_rows < dia.AUTO_MIN_ROWS
    assert rule_kernel(small) != "dia" and "dia" not in small._cache  # no detection pass at all
    enough = generators.poisson2d(210)  # 44,100 rows, 220k nonzeros (S1: by rows, at any size)
    assert enough.n_rows >= dia.AUTO_MIN_ROWS and enough.nnz < 2**20 and rule_kernel(enough) == "dia"
    large = generators.poisson2d(460)  # 1.06M nonzeros
    assert rule_kernel(large) == "dia"
    choice = describe_choice(large)
    # float64, 211,600 rows: one wave of threads at a row each
    assert choice["kernel"] == "dia" and choice["diagonals"] == 5 and choice["rows_a_thread"] == 1
    assert auto_line(choice).startswith("auto runs   dia:1 (5 diagonals): the rule on row statistics")
    irregular = generators.from_spec("gen:powerlaw:300000:8:2000")
    assert irregular.n_rows >= dia.AUTO_MIN_ROWS and rule_kernel(irregular) != "dia" and "dia" not in irregular._cache


def test_tuner_times_dia_where_it_applies_and_ignores_a_cached_dia_elsewhere(tmp_path):
    assert {"dia:1", "dia:2"} <= set(tune.candidates(generators.poisson2d(30)))  # float64: 1 or 2 rows a thread
    assert not any(name.startswith("dia") for name in tune.candidates(generators.from_spec("gen:random:2000:8")))
    # two matrices with one row pointer share a fingerprint; only one has diagonals
    band = generators.banded(2000, 3)
    scrambled = band.to_scipy().copy()
    scrambled.indices = np.random.default_rng(0).permutation(2000)[scrambled.indices].astype(scrambled.indices.dtype)
    scrambled.sort_indices()
    other = CSRMatrix.from_scipy(scrambled)
    cache = tune.TuneCache(tmp_path / "tune.json")
    cache.store(tune.fingerprint(band, "GPU"), {"kernel": "dia"})
    assert tune.apply_cached(band, "GPU", cache) == "dia"
    assert tune.apply_cached(other, "GPU", cache) is None


def test_refresh_drops_the_diagonals_after_values_are_written_in_place(rng):
    """dia holds a copy of A's values: after writing into A.data, A.refresh() rebuilds it."""
    A = generators.poisson2d(30)
    before = dia.structure(A)
    A.data *= 2.0
    assert dia.structure(A) is before  # still the old copy: the cache cannot see the write
    A.refresh()
    after = dia.structure(A)
    assert after is not before
    x = rng.standard_normal(A.n_cols)
    np.testing.assert_array_equal(_dia_product(after, A.n_rows, A.n_cols, x), A.to_scipy() @ x)


def test_no_room_for_the_diagonals_is_a_refusal_and_auto_runs_csr(monkeypatch):
    monkeypatch.setattr(structured, "fits", lambda xp, nbytes: False)
    A = generators.poisson2d(460)
    found = dia.structure(A)
    assert isinstance(found, dia.Refusal) and "free device memory" in found.reason
    assert rule_kernel(A) == AUTO_RULE[matrix_class(row_stats(A), pack_entries(A.dtype, A.index_dtype),
                                                    lambda: near_share(A))]  # the CSR kernel of its class


def test_running_out_of_memory_while_storing_is_a_refusal(monkeypatch):
    def out_of_memory(*args):
        raise MemoryError("no room")

    monkeypatch.setattr(csr_passes, "check_diagonals", out_of_memory)
    monkeypatch.setattr(structured, "is_out_of_memory", lambda exc: isinstance(exc, MemoryError))
    assert "ran out" in dia.structure(generators.poisson2d(10)).reason
    monkeypatch.setattr(structured, "is_out_of_memory", lambda exc: False)
    with pytest.raises(MemoryError):  # anything else is not swallowed
        dia.structure(generators.poisson2d(11))


def test_rows_a_thread_follow_the_diagonals_and_the_dtype():
    """dia:R takes R rows a thread: the most whose values of one sweep of the diagonals fit
    THREAD_BYTES (the H200's winners: 2D/3D Poisson 4 in float32, 2 in float64; a 27-point stencil
    2 and 1; a band of 33 diagonals 1), never more than one 16-byte load."""
    assert dia.rows_choices(np.float32) == (1, 2, 4) and dia.rows_choices(np.float64) == (1, 2)
    for n_diagonals, rows32, rows64 in ((0, 4, 2), (5, 4, 2), (7, 4, 2), (27, 2, 1), (33, 1, 1), (64, 1, 1)):
        assert dia.rows_for(n_diagonals, np.float32) == rows32 and dia.rows_for(n_diagonals, np.float64) == rows64
    assert dia.STRIDE_ROWS % max(dia.ROWS) == 0
    # rows that need just over one wave of threads at that R, and not at twice it, take twice it
    one_wave = dia.RESIDENT_THREADS
    assert dia.rows_for(33, np.float32, one_wave) == 1 and dia.rows_for(33, np.float32, one_wave + 1) == 2
    assert dia.rows_for(27, np.float64, 2 * one_wave) == 2 and dia.rows_for(27, np.float64, 2 * one_wave + 1) == 1
    assert dia.rows_for(5, np.float32, 4 * one_wave + 1) == 4  # no 8 rows a thread: R stays
    assert dia.rows_for(27, np.float32, 2 * one_wave + 1) == 4  # 2 by bytes, 4 for one wave
    # rows that fit one wave at fewer rows a thread take the fewest that do: more threads in flight
    assert dia.rows_for(27, np.float32, one_wave) == 1 and dia.rows_for(27, np.float32, one_wave + 1) == 2
    assert dia.rows_for(5, np.float32, 2 * one_wave) == 2 and dia.rows_for(5, np.float32, 3 * one_wave) == 4
    assert dia.rows_for(5, np.float64, 100) == 1 and dia.rows_for(64, np.float32, 10**8) == 1
    A = generators.poisson3d(9).astype(np.float32)  # 7 diagonals, 729 rows: one wave at any R
    assert plan_spmv(A, "dia").param == 1 and plan_spmv(A, "dia:4").param == 4
    assert plan_spmv(A.astype(np.float64), "dia:2").param == 2
    with pytest.raises(KernelError, match="dia:4 runs on float32 only"):
        plan_spmv(A.astype(np.float64), "dia:4")
    with pytest.raises(KernelError, match="dia an optional :ROWS"):
        plan_spmv(A, "dia:3")
    assert "dia:1" in tune.candidates(A) and "dia:2" in tune.candidates(A)


def test_tiny_matrices_are_sampled_whole():
    """Two entries on two diagonals: a sample drawn with replacement could miss one."""
    A = CSRMatrix.from_scipy(sp.csr_matrix(np.array([[1.0, 2.0]])))
    found = dia.structure(A)
    assert isinstance(found, dia.Structure) and list(found.offsets) == [0, 1]


@pytest.fixture
def any_size(monkeypatch):
    """dia's palette at any size of values (the launcher takes it from PALETTE_MIN_BYTES)."""
    monkeypatch.setattr(dia, "PALETTE_MIN_BYTES", 0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_palette_codes_every_slot_bit_for_bit(any_size, rng, dtype):
    """A stencil of constant coefficients has a table of its two values; every slot's code picks its
    value's bits back (padding: code 0, table[0] zero), and so does a matrix of 255 values."""
    A = generators.poisson3d(12).astype(dtype)
    found = dia.structure(A)
    values = found.values  # (the palette releases them from the structure)
    coded = dia.palette(A, found)
    assert coded.n_values == 2 and coded.codes.dtype == np.uint8 and coded.codes.shape == values.shape
    assert coded.table[0] == 0 and sorted(coded.table[1:].tolist()) == [-1.0, 6.0]
    np.testing.assert_array_equal(coded.table[coded.codes].view(np.uint8), values.view(np.uint8))
    many = A.copy()
    many.data[:] = rng.choice(rng.standard_normal(255), many.nnz).astype(dtype)
    found = dia.structure(many)
    values = found.values
    coded = dia.palette(many, found)
    assert coded is not None and coded.n_values == np.unique(many.data).size <= dia.PALETTE_VALUES
    np.testing.assert_array_equal(coded.table[coded.codes].view(np.uint8), values.view(np.uint8))


def test_palette_releases_the_values_and_stays(monkeypatch):
    """Once coded, the structure gives its values back (the codes hold them) and keeps their size;
    the palette stays A's when the rule would no longer take it, and a structure the palette refused
    keeps its values."""
    A = generators.poisson2d(40).astype(np.float32)
    found = dia.structure(A)
    nbytes, stride = found.values.nbytes, found.stride
    monkeypatch.setattr(dia, "PALETTE_MIN_BYTES", 0)
    coded = dia.palette(A, found)
    assert coded.n_values == 2 and found.values is None and dia.structure(A) is found
    assert (found.nbytes, found.stride) == (nbytes, stride)
    monkeypatch.setattr(dia, "PALETTE_MIN_BYTES", 1 << 62)
    assert dia.palette(A, found) is coded
    B = generators.poisson2d(40).astype(np.float32)
    B.data[:] = np.arange(B.nnz) + 1.0  # more values than a palette holds
    monkeypatch.setattr(dia, "PALETTE_MIN_BYTES", 0)
    refused = dia.structure(B)
    assert dia.palette(B, refused) is None and refused.values is not None


def test_palette_finds_values_its_sample_missed_and_refuses_too_many(any_size, monkeypatch, rng):
    """Values the sample of 4,096 slots missed are kept by the coding pass (the bits of up to
    palette.MISSED slots a pass) and coded by the next, at most palette.PASSES passes; more than 255
    values, in the sample or past it, is no palette."""
    def ten_rows_of_their_own():
        A = generators.poisson3d(20)  # 8,000 rows x 7 diagonals: 56,000 slots, a sample misses most
        A.data[A.indptr[100:110]] = np.arange(10) + 0.5  # ten rows' first values, one of their own each
        return A, dia.structure(A)

    monkeypatch.setattr(palette, "MISSED", 5)  # passes keep 5 and 5 of the ten, the third codes all
    A, found = ten_rows_of_their_own()
    values = found.values
    coded = dia.palette(A, found)
    assert coded.n_values == 12
    np.testing.assert_array_equal(coded.table[coded.codes], values)
    monkeypatch.setattr(palette, "MISSED", 4)  # 4 and 4 kept: two still off the keys after the third
    assert dia.palette(*ten_rows_of_their_own()) is None
    monkeypatch.setattr(palette, "MISSED", 1 << 16)
    past = generators.poisson3d(20)
    past.data[past.indptr[:300]] = np.arange(300) + 0.5  # 300 values, about 20 of them sampled
    assert dia.palette(past, dia.structure(past)) is None
    random = generators.poisson3d(20)
    random.data[:] = rng.standard_normal(random.nnz)
    assert dia.palette(random, dia.structure(random)) is None


def test_palette_is_taken_from_its_size_in_its_dtypes(monkeypatch):
    """The launcher's rule: a call that touches at least PALETTE_MIN_BYTES (values, x and y), in a
    dtype of PALETTE_DTYPES."""
    A = generators.poisson2d(40).astype(np.float32)  # 5 x 1,600 slots and 1,600 rows of 4 bytes
    found = dia.structure(A)
    touched = found.values.nbytes + 2 * 1600 * 4
    assert found.values.nbytes >= 5 * 1600 * 4
    monkeypatch.setattr(dia, "PALETTE_MIN_BYTES", touched + 1)
    assert dia.palette(A, found) is None and "dia-palette" not in A._cache  # no detection at all
    monkeypatch.setattr(dia, "PALETTE_MIN_BYTES", touched)
    assert dia.palette(A, found).n_values == 2
    B = generators.poisson2d(40).astype(np.float32)
    monkeypatch.setattr(dia, "PALETTE_DTYPES", ("float64",))
    assert dia.palette(B, dia.structure(B)) is None
