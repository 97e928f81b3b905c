"""int64 indices end to end: loader, analysis, CPU SpMV and the index-width rule."""


from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import spla
from spla import InputError, analysis
from spla.csr import INT32_MAX, CSRMatrix, index_dtype_for
from spla.io import mmio
from spla.planning.stats import host_row_lengths

WIDE = 2**31 + 5  # a dimension no int32 can index


# ===================================================================== int64 end to end
def sparse_vector(tmp_path, n, values: dict, dtype=np.float64):
    """A length-n vector backed by a sparse file: only the pages holding ``values`` use memory."""
    x = np.memmap(tmp_path / "x.bin", dtype=dtype, mode="w+", shape=(n,))
    for index, value in values.items():
        x[index] = value
    return x


def test_wide_matrix_uses_int64_through_loader_analysis_and_cpu_spmv(tmp_path):
    path = tmp_path / "wide.mtx"
    path.write_text(f"%%MatrixMarket matrix coordinate real general\n3 {WIDE} 4\n"
                    f"1 1 2.0\n1 {WIDE} 3.0\n3 {2**31} -1.5\n3 {2**31 + 1} 4.0\n")
    A, _ = mmio.read_mtx(path)
    assert A.shape == (3, WIDE) and A.index_dtype == np.int64
    assert A.indices.max() == WIDE - 1  # no wrap-around to a negative int32
    result = analysis.analyze(A)
    assert result["cols"] == WIDE and result["nnz"] == 4
    assert result["row_length"]["max"] == 2 and result["row_length"]["empty_rows"] == 1
    x = sparse_vector(tmp_path, WIDE, {0: 10.0, WIDE - 1: 1.0, 2**31 - 1: 2.0, 2**31: 5.0})
    y = spla.spmv(A, x)
    np.testing.assert_array_equal(y, [2.0 * 10 + 3.0 * 1, 0.0, -1.5 * 2 + 4.0 * 5])


def test_index_width_rule():
    assert index_dtype_for(INT32_MAX, (10, 10)) == np.int32
    assert index_dtype_for(INT32_MAX + 1, (10, 10)) == np.int64
    assert index_dtype_for(5, (3, WIDE)) == np.int64
    assert index_dtype_for(5, (WIDE, 3)) == np.int64
    with pytest.raises(InputError, match="int64"):
        CSRMatrix(np.ones(1), np.array([WIDE - 1]), np.array([0, 1, 1, 1]), (3, WIDE), index_dtype=np.int32)


def test_indptr_claiming_more_than_int32_entries_is_refused_cheaply():
    # row pointer says 2**31 + 10 entries, the arrays hold 3: refused before anything is sized from it
    indptr = np.array([0, 1, 2**31 + 10], dtype=np.int64)
    with pytest.raises(InputError, match="indptr"):
        CSRMatrix(np.ones(3), np.array([0, 1, 2]), indptr, (2, 4))


def test_analysis_sums_row_lengths_in_int64():
    # three rows of 2**31 - 1 entries: every total is past int32, none may wrap
    lengths = np.full(3, INT32_MAX, dtype=np.int64)
    nnz = int(lengths.sum())
    thread = analysis.thread_per_row(lengths, nnz)
    assert thread["max_work"] == INT32_MAX and thread["mean_work"] == INT32_MAX
    warp = analysis.warp_per_row(lengths, nnz)
    assert warp["max_work"] == 3 * -(-INT32_MAX // 32)
    values, counts = analysis.row_length_histogram(lengths)
    assert values.tolist() == [INT32_MAX] and counts.tolist() == [3]
    assert analysis._top_share(values, counts, 3, nnz) == pytest.approx(1 / 3)
    assert analysis._gini(values, counts, 3, nnz) == pytest.approx(0.0, abs=1e-12)


def test_row_lengths_of_an_int32_matrix_come_out_int64():
    A = CSRMatrix.from_scipy(sp.random(50, 40, density=0.2, format="csr", random_state=1))
    assert A.index_dtype == np.int32
    assert A.row_lengths().dtype == np.int64 and host_row_lengths(A).dtype == np.int64


