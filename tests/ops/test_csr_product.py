"""The CPU backend's SpMV and SpMM (spla.backends.cpu): csr_product.c over row ranges on threads gives
SciPy's bits, for every value and index type, and falls back to SciPy's kernel where it does not
apply."""

from __future__ import annotations

import multiprocessing
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import spla
from spla import csr_passes
from spla.backends import cpu
from spla.errors import InputError
from spla.io import native


@pytest.fixture
def threaded(monkeypatch):
    """Threads from 2 nonzeros a range, 3 threads (more than the rows of some tests)."""
    if native.csr_product_kernel(np.float64, np.int32) is None:
        pytest.skip(f"no C compiler here ({native.status()})")
    monkeypatch.setattr(cpu, "THREAD_MIN_NNZ", 1)
    monkeypatch.setenv(cpu.THREADS_ENV, "3")


def _matrix(rng, dtype, index_dtype, rows=500, cols=300):
    S = sp.random(rows, cols, density=0.05, format="csr", random_state=rng, dtype=np.float64)
    S.data = rng.standard_normal(S.nnz)
    S = S.astype(dtype)
    S.indptr, S.indices = S.indptr.astype(index_dtype), S.indices.astype(index_dtype)
    S.data[S.indptr[7]:S.indptr[8]] = 0  # an empty row
    S.eliminate_zeros()
    return spla.CSRMatrix(S.data, S.indices, S.indptr, S.shape, index_dtype=index_dtype), S


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_threads_give_scipys_bits(threaded, rng, dtype, index_dtype):
    A, S = _matrix(rng, dtype, index_dtype)
    assert A.index_dtype == index_dtype
    x = rng.standard_normal(S.shape[1]).astype(dtype)
    want = S @ x
    got = cpu.csr_product(A, x)
    assert got.dtype == dtype and np.array_equal(got, want)
    assert A._cache[("cpu-product-ranges", "spmv", 3)] is not None  # it took the threaded path
    out = np.full(S.shape[0], np.nan, dtype=dtype)
    assert cpu.csr_product(A, x, out) is out and np.array_equal(out, want)
    # through the front door, with alpha/beta and in place
    y = rng.standard_normal(S.shape[0]).astype(dtype)
    np.testing.assert_array_equal(spla.spmv(A, x), want)
    expected = dtype(2) * want + dtype(0.5) * y
    np.testing.assert_allclose(spla.spmv(A, x, y, alpha=2.0, beta=0.5), expected, rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("k,order", [(1, "C"), (3, "C"), (8, "F")])
def test_blocks_on_threads_give_scipys_bits(threaded, rng, dtype, index_dtype, k, order):
    A, S = _matrix(rng, dtype, index_dtype)
    X = np.asarray(rng.standard_normal((S.shape[1], k)).astype(dtype), order=order)
    want = S @ X
    got = cpu.csr_product(A, X)
    assert got.shape == (S.shape[0], k) and np.array_equal(got, want)
    assert A._cache[("cpu-product-ranges", "spmm", 3)] is not None  # it took the threaded path
    out = np.full((S.shape[0], k), np.nan, dtype=dtype)
    assert cpu.csr_product(A, X, out) is out and np.array_equal(out, want)
    np.testing.assert_array_equal(spla.spmm(A, X), want)
    np.testing.assert_array_equal(spla.spmm(A, X, kernel="scipy"), want)


def test_ranges_split_the_nonzeros_evenly(threaded, rng):
    A, _ = _matrix(rng, np.float64, np.int32, rows=4000)
    _, _, cuts = cpu._row_ranges(A, 3, "spmv")
    assert cuts[0] == 0 and cuts[-1] == A.n_rows and cuts == sorted(cuts)
    per_range = np.diff(np.asarray(A.indptr)[cuts])
    assert per_range.max() - per_range.min() <= 2 * int(np.diff(A.indptr).max())


def test_an_x_that_is_the_output_is_read_before_it_is_written(threaded, rng):
    S = sp.random(200, 200, density=0.1, format="csr", random_state=rng)
    A = spla.CSRMatrix.from_scipy(S)
    x = rng.standard_normal(200)
    want = S @ x
    got = cpu.csr_product(A, x, out=x)  # overlaps x: a fresh output
    assert got is not x and np.array_equal(got, want)


def _ranges(A) -> list:
    return [key for key in A._cache if key[0] == "cpu-product-ranges"]


def test_where_threads_do_not_apply_scipy_runs(monkeypatch, rng):
    A, S = _matrix(rng, np.float64, np.int32)
    x = rng.standard_normal(S.shape[1])
    monkeypatch.setattr(cpu, "THREAD_MIN_NNZ", 1)
    monkeypatch.setenv(cpu.THREADS_ENV, "1")  # one thread: SciPy's call
    assert np.array_equal(cpu.csr_product(A, x), S @ x) and not _ranges(A)
    monkeypatch.setenv(cpu.THREADS_ENV, "2")
    x32 = x.astype(np.float32)  # not A's dtype: SciPy's call, with its promotion
    assert np.array_equal(cpu.csr_product(A, x32), S @ x32) and not _ranges(A)
    monkeypatch.setenv(native.NATIVE_ENV, "off")  # no C kernel: SciPy, remembered on A
    assert np.array_equal(cpu.csr_product(A, x), S @ x) and A._cache[("cpu-product-ranges", "spmv", 2)] is None
    monkeypatch.setenv(cpu.THREADS_ENV, "many")
    with pytest.raises(InputError, match="SPLA_NUM_THREADS"):
        cpu.csr_product(A, x)


def test_kernel_scipy_runs_scipys_call(monkeypatch, rng):
    A, S = _matrix(rng, np.float64, np.int32)
    x = rng.standard_normal(S.shape[1])
    monkeypatch.setattr(cpu, "csr_product", lambda *args: pytest.fail("kernel='scipy' ran spla's SpMV"))
    np.testing.assert_array_equal(spla.spmv(A, x, kernel="scipy"), S @ x)


def _product_in_child(queue):
    fresh = cpu._pool is None  # the parent's pool threads do not exist here
    A = spla.CSRMatrix.from_scipy(sp.random(300, 300, density=0.1, format="csr", random_state=1))
    x = np.ones(300)
    queue.put(fresh and bool(np.array_equal(cpu.csr_product(A, x), A.to_scipy() @ x)))


@pytest.mark.skipif(sys.platform != "linux", reason="fork is the Linux start method")
def test_a_forked_child_makes_its_own_pool(threaded, rng):
    A, S = _matrix(rng, np.float64, np.int32)
    cpu.csr_product(A, rng.standard_normal(S.shape[1]))  # the parent's pool exists
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_product_in_child, args=(queue,))
    child.start()
    child.join(60)
    assert child.exitcode == 0 and queue.get(timeout=5) is True


def test_matrices_of_any_size_share_one_pool(threaded, rng):
    S_small = sp.csr_matrix(np.diag([2.0, 3.0]))  # 2 nonzeros: 2 of the 3 threads
    small = spla.CSRMatrix.from_scipy(S_small)
    large, S_large = _matrix(rng, np.float64, np.int32)
    for A, S in ((large, S_large), (small, S_small), (large, S_large)):
        x = rng.standard_normal(S.shape[1])
        assert np.array_equal(cpu.csr_product(A, x), S @ x)
    pool = cpu._pool
    assert pool is not None and pool[0] == 2  # 3 threads: the caller and 2 workers, made once
    cpu.csr_product(small, rng.standard_normal(S_small.shape[1]))
    assert cpu._pool is pool


@pytest.mark.parametrize("k", [2, 5, 8, 11, 19])
def test_a_block_takes_the_c_kernel_on_one_thread_too(monkeypatch, rng, k):
    """8 columns at a time in registers, then the rest: every width, one thread, SciPy's bits."""
    if native.csr_product_kernel(np.float64, np.int32, "spmm") is None:
        pytest.skip(f"no C compiler here ({native.status()})")
    monkeypatch.setenv(cpu.THREADS_ENV, "1")
    A, S = _matrix(rng, np.float64, np.int32)
    X = rng.standard_normal((S.shape[1], k))
    assert np.array_equal(cpu.csr_product(A, X), S @ X)
    assert ("cpu-product-ranges", "spmm", 1) in A._cache
    one_column = rng.standard_normal((S.shape[1], 1))  # SciPy's matvec is as fast: SciPy
    assert np.array_equal(cpu.csr_product(A, one_column), S @ one_column)
    empty = spla.CSRMatrix.from_scipy(sp.csr_matrix((4, S.shape[1])))
    assert np.array_equal(cpu.csr_product(empty, X), np.zeros((4, k)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("value", [1.0, -2.5, 0.0, np.nan], ids=["ones", "one-value", "zeros", "nans"])
def test_a_matrix_of_one_value_reads_it_once_with_scipys_bits(threaded, monkeypatch, rng, dtype, index_dtype,
                                                              value):
    """Every stored value the same (a pattern matrix's ones, say): the kernel that reads the indices
    alone (for float64 too where UNIFORM_DTYPES has it), with the bits of SciPy's product over the
    stored values (x holds an inf and a NaN too); SpMM keeps its own kernel, a one-column block
    included."""
    monkeypatch.setattr(cpu, "UNIFORM_DTYPES", ("float32", "float64"))
    A, S = _matrix(rng, dtype, index_dtype)
    S.data[:] = value
    A = spla.CSRMatrix(S.data, S.indices, S.indptr, S.shape, index_dtype=index_dtype)
    x = rng.standard_normal(S.shape[1]).astype(dtype)
    x[[3, 11]] = np.inf, np.nan
    got, want = cpu.csr_product(A, x), S @ x
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(want))  # zeros of the sign SciPy gives
    assert cpu.uniform_values(A) and ("cpu-product-ranges", "spmv_uniform", 3) in A._cache
    assert A._cache[("cpu-product-ranges", "spmv_uniform", 3)][1][2].size == 1  # the value, once
    column = x[:, None]
    assert np.array_equal(cpu.csr_product(A, column), S @ column, equal_nan=True)
    assert ("cpu-product-ranges", "spmm", 3) in A._cache


def test_uniform_values_compares_bits_in_every_piece(monkeypatch):
    """One bit pattern in every piece of the values (pieces of 2, 4, 4, ... here), or False: 0.0
    beside -0.0 is two values (their products' zeros differ in sign), and so is a last value that
    differs; an empty matrix is False, and so is a dtype outside UNIFORM_DTYPES (float64 by default)."""
    monkeypatch.setattr(csr_passes, "FIRST_PIECE", 2)
    monkeypatch.setattr(csr_passes, "UNIFORM_PIECE", 4)

    def uniform(values, dtype=np.float32) -> bool:
        values = np.asarray(values, dtype=dtype)
        n = values.size
        return cpu.uniform_values(spla.CSRMatrix(values, np.arange(n), np.arange(n + 1), (n, n)))

    assert uniform([3.0] * 10) and uniform([np.nan] * 6)
    assert not uniform([3.0] * 9 + [3.0001]) and not uniform([0.0, 0.0, -0.0])
    assert not uniform([3.0] * 6 + [4.0] + [3.0] * 6)  # in the third piece
    assert not uniform([])
    assert cpu.UNIFORM_DTYPES == ("float32",) and not uniform([3.0] * 10, np.float64)
    monkeypatch.setattr(cpu, "UNIFORM_DTYPES", ("float32", "float64"))
    assert uniform([3.0] * 10, np.float64) and not uniform([3.0] * 9 + [3.000001], np.float64)


def test_spmv_runs_says_what_auto_runs(monkeypatch, rng):
    """spla spmv's CPU report: SciPy's kernel below the thread cut, else the C kernel on its threads,
    reading the indices alone where every value is the same."""
    A, S = _matrix(rng, np.float32, np.int32)
    assert cpu.spmv_runs(A).startswith("SciPy's kernel (spla's C kernel runs from 1,000,000 nonzeros")
    if native.csr_product_kernel(np.float32, np.int32) is None:
        pytest.skip(f"no C compiler here ({native.status()})")
    monkeypatch.setattr(cpu, "THREAD_MIN_NNZ", 1)
    monkeypatch.setenv(cpu.THREADS_ENV, "2")
    assert cpu.spmv_runs(A) == "spla/backends/csr_product.c on 2 threads, values and indices"
    ones = spla.CSRMatrix.from_scipy(S.astype(bool).astype(np.float32))
    assert cpu.spmv_runs(ones) == "spla/backends/csr_product.c on 2 threads, indices only: every value is 1"
    assert cpu.spmv_runs(ones.astype(np.float64)).endswith("values and indices")  # not in UNIFORM_DTYPES
    monkeypatch.setenv(native.NATIVE_ENV, "off")
    assert cpu.spmv_runs(A) == "SciPy's kernel (no C compiler, or $SPLA_NATIVE is off)"
