"""CG's C loop on the CPU (spla/backends/cg_loop.c): NumPy's steps to rounding, on any number of threads."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from precond_systems import poisson2d

from spla import CSRMatrix
from spla.backends import cpu
from spla.io import native
from spla.linalg import IterationCounter, cg, jacobi
from spla.linalg._kernels import HostKernels

pytestmark = pytest.mark.skipif(native.cg_loop_kernel(np.float64, np.int32) is None,
                                reason="no C compiler: CG runs NumPy's steps")


@pytest.fixture
def runs(monkeypatch):
    """The thread counts of every CgLoop.run call."""
    seen = []
    run = cpu.CgLoop.run

    def counted(self, *args):
        seen.append(self.threads)
        return run(self, *args)

    monkeypatch.setattr(cpu.CgLoop, "run", counted)
    return seen


def _numpy_steps(monkeypatch, A, b, **options):
    with monkeypatch.context() as patch:
        patch.setattr(HostKernels, "cg_loop", lambda self, matrix, jacobi: None)
        counter = IterationCounter()
        x, info = cg(A, b, callback=counter, **options)
    return x, info, counter.iterations


def _spd(n, rng, dtype, index_dtype):
    """A random sparse SPD matrix with rows of very different lengths (a few dense ones)."""
    dense = sp.csr_matrix(rng.standard_normal((3, n)) * (rng.random((3, n)) < 0.5))
    sparse = sp.random(n - 3, n, density=4 / n, random_state=np.random.default_rng(rng.integers(1 << 30)))
    B = sp.vstack([dense, sparse])
    S = (B @ B.T + sp.identity(n) * 2.0).tocsr().astype(dtype)
    S.indptr, S.indices = S.indptr.astype(index_dtype), S.indices.astype(index_dtype)
    return CSRMatrix.from_scipy(S)


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("preconditioner", ["none", "jacobi"])
@pytest.mark.parametrize("shape", ["poisson", "random"])
def test_the_loop_gives_numpys_iterates_to_rounding(monkeypatch, rng, runs, threads, dtype, index_dtype,
                                                    preconditioner, shape):
    """Three threads on two cores also run (the barrier yields), and every row range, empty ones
    included (a dense row takes a range of its own), adds its share."""
    monkeypatch.setenv(cpu.THREADS_ENV, str(threads))
    monkeypatch.setattr(cpu, "CG_THREAD_MIN_NNZ", 1)
    if shape == "poisson":
        S = poisson2d(30).astype(dtype)
        S.indptr, S.indices = S.indptr.astype(index_dtype), S.indices.astype(index_dtype)
        A = CSRMatrix.from_scipy(S)
    else:
        A = _spd(500, rng, dtype, index_dtype)
    M = jacobi(A) if preconditioner == "jacobi" else None
    b = rng.standard_normal(A.n_rows).astype(dtype)
    rtol = 1e-4 if dtype == np.float32 else 1e-9
    options = dict(rtol=rtol, maxiter=2000, M=M)
    x_steps, info_steps, its_steps = _numpy_steps(monkeypatch, A, b, **options)
    counter = IterationCounter()
    x, info = cg(A, b, callback=counter, **options)
    assert runs and set(runs) == {threads}
    assert info == info_steps == 0
    assert abs(counter.iterations - its_steps) <= (1 if dtype == np.float64 else max(3, its_steps // 10))
    S64 = A.to_scipy().astype(np.float64)
    assert np.linalg.norm(b - S64 @ x) <= rtol * np.linalg.norm(b) * (1.01 if dtype == np.float64 else 10)
    close = 1e-6 if dtype == np.float64 else 1e-2
    np.testing.assert_allclose(x, x_steps, rtol=close, atol=close * np.abs(x_steps).max())


def test_the_iterates_depend_on_the_thread_count_only(monkeypatch, rng, runs):
    """Not on timing (five runs of three threads on two cores) nor on how the iterations are split
    into calls (in one call, in calls of 7, or one a call under a callback)."""
    monkeypatch.setenv(cpu.THREADS_ENV, "3")
    monkeypatch.setattr(cpu, "CG_THREAD_MIN_NNZ", 1)
    A = CSRMatrix.from_scipy(poisson2d(40))
    b = rng.standard_normal(A.n_rows)
    options = dict(rtol=1e-10, maxiter=300)
    x, info = cg(A, b, **options)
    assert info == 0
    for _ in range(4):
        np.testing.assert_array_equal(cg(A, b, **options)[0], x)
    monkeypatch.setattr(cpu, "CG_LOOP_CALL_NNZ", 7 * A.nnz)  # calls of 7 iterations
    np.testing.assert_array_equal(cg(A, b, **options)[0], x)
    seen = []
    np.testing.assert_array_equal(cg(A, b, callback=seen.append, **options)[0], x)
    assert set(runs) == {3} and len(runs) > len(seen) > 100  # a call an iteration under the callback
    monkeypatch.setenv(cpu.THREADS_ENV, "1")
    x_one = cg(A, b, **options)[0]
    np.testing.assert_allclose(x_one, x, rtol=1e-9, atol=1e-12 * np.abs(x).max())
    assert runs[-1] == 1


def test_the_loop_stops_where_scipy_does_and_counts(rng, runs):
    import scipy.sparse.linalg as sla

    A = CSRMatrix.from_scipy(poisson2d(24))
    for _ in range(3):
        b = rng.standard_normal(A.n_rows)
        calls = []
        sla.cg(A.to_scipy(), b, rtol=1e-8, callback=calls.append)
        counter = IterationCounter()
        x, info = cg(A, b, rtol=1e-8, check_every=8, callback=counter)
        assert info == 0 and abs(counter.iterations - len(calls)) <= 1
        counter = IterationCounter()
        x, info = cg(A, b, rtol=1e-12, maxiter=10, callback=counter)
        assert info == 10 and counter.iterations == 10
    assert runs and max(runs) >= 1


def test_the_loop_reports_a_breakdown_and_keeps_x_finite(runs):
    A = CSRMatrix.from_scipy(sp.csr_matrix(np.array([[0.0, 1.0], [1.0, 0.0]])))
    x, info = cg(A, np.array([1.0, 0.0]))  # p.Ap = 0 at the first step
    assert info == -1 and np.isfinite(x).all() and runs
    x, info = cg(A, np.array([1.0, np.nan]))
    assert info == -1 and runs


def test_the_loop_runs_only_where_it_applies(monkeypatch, rng, runs):
    """Not for a general preconditioner or an operator (NumPy's steps), nor with SPLA_NATIVE=off; on
    a matrix of integers, in the solve's dtype."""
    from scipy.sparse.linalg import aslinearoperator

    S = poisson2d(12)
    A = CSRMatrix.from_scipy(S)
    b = rng.standard_normal(A.n_rows)
    cg(A, b, M=aslinearoperator(sp.diags(1.0 / S.diagonal())))
    cg(aslinearoperator(S), b)
    assert runs == []
    monkeypatch.setenv(native.NATIVE_ENV, "off")
    cg(A, b)
    assert runs == []
    monkeypatch.delenv(native.NATIVE_ENV)
    x, info = cg(CSRMatrix.from_scipy(S.astype(np.int64)), b)
    assert info == 0 and len(runs) == 1
    np.testing.assert_allclose(S @ x, b, rtol=0, atol=1e-4 * np.linalg.norm(b))


def test_a_large_matrix_takes_a_thread_per_share(monkeypatch):
    monkeypatch.setenv(cpu.THREADS_ENV, "16")
    A = CSRMatrix.from_scipy(poisson2d(100))  # ~50k nonzeros: six threads of the sixteen allowed
    loop = cpu.CgLoop.for_matrix(A)
    assert loop is not None and loop.threads == A.nnz // cpu.CG_THREAD_MIN_NNZ == 6
    cuts = loop._cuts
    shares = np.diff(A.indptr[cuts])
    assert cuts[0] == 0 and cuts[-1] == A.n_rows and shares.max() - shares.min() <= 10


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cpu_dot_sums_in_double(rng, dtype):
    for n in (0, 1, 7, 8, 9, 17, 1000):
        a, b = (rng.standard_normal(n).astype(dtype) for _ in range(2))
        exact = float(np.dot(a.astype(np.float64), b.astype(np.float64)))
        assert cpu.dot(a, b) == pytest.approx(exact, rel=1e-12, abs=1e-12)
    a = rng.standard_normal(20).astype(dtype)
    assert cpu.dot(a[::2], a[::2]) == pytest.approx(float(np.dot(a[::2], a[::2])), rel=1e-5)  # strided
    assert cpu.dot(a, a.astype(np.float64)) == pytest.approx(float(np.dot(a, a)), rel=1e-5)  # mixed: NumPy's


def test_the_loop_path_calls_no_blas(monkeypatch, rng, runs):
    """NumPy's dot and norm call BLAS, whose idle threads then spin for ~0.1 s on the cores the
    loop's threads need: CG on a CSR matrix takes its norms and first rho from cpu.dot."""
    A = CSRMatrix.from_scipy(poisson2d(120))  # past OpenBLAS's cut for a threaded dot (10,000)
    b = rng.standard_normal(A.n_rows)
    x0 = rng.standard_normal(A.n_rows)

    def refuse(*args, **kwargs):
        raise AssertionError("BLAS called on CG's loop path")

    monkeypatch.setattr(np, "dot", refuse)
    monkeypatch.setattr(np, "vdot", refuse)
    monkeypatch.setattr(np.linalg, "norm", refuse)
    for M in (None, jacobi(A)):
        x, info = cg(A, b, x0=x0, rtol=1e-8, M=M)
        assert info == 0
    monkeypatch.undo()
    assert len(runs) == 2 and np.linalg.norm(b - A.to_scipy() @ x) <= 1.01e-8 * np.linalg.norm(b)

