"""Where band and rle rotate their value loads (spla.planning.banks), on the host: how many
rows of a warp ask one L1 bank, the decision per width and dtype, and what ``spla info`` says."""

from __future__ import annotations

import numpy as np
from conftest import block_rows

from spla import CSRMatrix
from spla.planning import banks
from spla.planning.spmv import describe_choice
from spla.planning.stats import gather

ROTATED = ", value loads rotated (its rows start on one L1 bank)"


def _rows_of(length: int, n_rows: int, dtype=np.float32) -> CSRMatrix:
    """A band of ``n_rows`` rows of ``length`` consecutive columns, row r from column r."""
    indptr = np.arange(n_rows + 1) * length
    indices = (np.arange(n_rows)[:, None] + np.arange(length)).ravel()
    return CSRMatrix(np.linspace(-1, 1, indices.size).astype(dtype), indices, indptr, (n_rows, n_rows + length))


def test_bank_pile_counts_a_warps_rows_on_its_busiest_bank():
    pile = {length: [banks.bank_pile(np.arange(0, 1000 * length + 1, length), lanes, 4) for lanes in (2, 4, 8)]
            for length in (30, 32, 33, 40, 48, 64)}
    # rows of 32 and 64 float32 entries are whole lines: every row of a warp starts on one bank
    assert pile[32] == pile[64] == [16, 8, 4]
    assert pile[48] == [8, 4, 2] and pile[40] == [4, 2, 1] and pile[30] == [1, 2, 0]  # rows of 30: no 8-lane round
    assert pile[33] == [2, 4, 4]  # each row a bank on: 4 lanes' windows of neighbouring rows overlap
    assert banks.bank_pile(np.arange(0, 1000 * 16 + 1, 16), 2, 8) == 16  # float64 rows of 16 are whole lines too
    assert banks.bank_pile(np.zeros(6, dtype=np.int64), 2, 4) == 0.0  # fewer rows than a warp


def test_gather_reads_the_picked_entries_in_their_shape():
    got = gather(np.arange(100, dtype=np.int32) * 3, np.array([[0, 5], [7, 99]]))
    assert got.dtype == np.int64 and got.tolist() == [[0, 15], [21, 297]]


def test_rotates_where_a_warp_piles_on_one_bank_in_the_sizes_each_kernel_rotates():
    rows_of_32 = CSRMatrix.from_scipy(block_rows(200, 16, 2)).astype(np.float32)  # runs of 16, two a row
    assert [banks.rotates(rows_of_32, "rle", lanes) for lanes in (2, 4, 8, 16)] == [True, True, True, False]
    rows_of_40 = CSRMatrix.from_scipy(block_rows(200, 20, 2)).astype(np.float32)
    assert [banks.rotates(rows_of_40, "rle", lanes) for lanes in (2, 4, 8)] == [False] * 3
    assert banks.rotates(_rows_of(32, 4000), "band", 2) and not banks.rotates(_rows_of(40, 4000), "band", 2)
    # float64 rows of 16 are whole lines: band rotates them, rle keeps the plain order (its registers)
    float64_rows_of_16 = _rows_of(16, 4000, np.float64)
    assert banks.rotates(float64_rows_of_16, "band", 2) and not banks.rotates(float64_rows_of_16, "rle", 2)
    assert not banks.rotates(_rows_of(17, 4000, np.float64), "band", 2)


def test_info_names_the_rotated_loads():
    choice = describe_choice(_rows_of(32, 40_000))  # 1.3M nonzeros, one run a row: auto runs band at 2 lanes
    assert (choice["kernel"], choice["lanes"]) == ("band", 2) and choice["structure"].endswith(ROTATED)
    assert describe_choice(_rows_of(32, 40_000, np.float64))["structure"].endswith(ROTATED)  # band at 4 lanes
    assert not describe_choice(_rows_of(36, 40_000))["structure"].endswith(ROTATED)
