"""CG with its iterations captured into a CUDA graph gives the iterates of the uncaptured loop."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import to_host
from precond_systems import poisson2d

from spla import CSRMatrix
from spla.errors import InputError
from spla.linalg import DEFAULT_GPU_CHECK_EVERY, _krylov, cg, jacobi


@pytest.fixture
def numpy_steps():
    """CG's NumPy steps on the CPU (the C loop off): the plain loop the host stand-ins of the GPU's
    paths are held to bit for bit. Its own patch, so a test's ``monkeypatch.undo()`` keeps it."""
    from spla.linalg._kernels import HostKernels

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(HostKernels, "cg_loop", lambda self, matrix, jacobi: None)
        yield


def _counting_capture(monkeypatch):
    graphs = []
    original = _krylov._capture

    def capture(xp, launches):
        graph = original(xp, launches)
        graphs.append(graph)
        return graph

    monkeypatch.setattr(_krylov, "_capture", capture)
    return graphs


def _counting_loop(monkeypatch):
    """The iteration counts of the one-launch loop's launches (kernels/solver_cg_product.cu)."""
    from spla.backends.cuda import solvers

    counts = []
    run = solvers.CgLoop.run

    def counted(self, first, count, *buffers):
        counts.append(count)
        return run(self, first, count, *buffers)

    monkeypatch.setattr(solvers.CgLoop, "run", counted)
    return counts


@pytest.mark.gpu
@pytest.mark.parametrize("path", ["graph", "loop"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("preconditioner", ["none", "jacobi"])
@pytest.mark.parametrize("maxiter,check_every", [(5, 8), (16, 8), (37, 8), (41, 2), (300, 8)])
def test_captured_cg_gives_the_uncaptured_iterates(monkeypatch, rng, path, dtype, preconditioner, maxiter,
                                                   check_every):
    """Both ways of running the iterations between checks without Python: the graph of two
    iterations (the loop turned off), and the one-launch loop (the default at this size),
    where capture=False launches the loop once an iteration."""
    import cupy

    from spla.backends.cuda import solvers

    if path == "graph":
        monkeypatch.setattr(solvers, "CG_LOOP_MAX_ROWS", 0)
    graphs = _counting_capture(monkeypatch)
    counts = _counting_loop(monkeypatch)
    A = CSRMatrix.from_scipy(poisson2d(48).astype(dtype))
    M = jacobi(A) if preconditioner == "jacobi" else None
    b = cupy.asarray(rng.standard_normal(A.n_rows).astype(dtype))
    options = dict(rtol=1e-6, maxiter=maxiter, M=M, check_every=check_every)
    x_plain, info_plain = cg(A, b, capture=False, **options)
    assert graphs == []
    plain_counts, counts[:] = counts[:], []
    x_graph, info_graph = cg(A, b, capture=True, **options)
    if path == "loop":
        assert graphs == [] and set(plain_counts) == {1}, "the loop did not run once an iteration"
        batches = [min(solvers.CG_LOOP_BATCH, maxiter - done) for done in range(0, maxiter, solvers.CG_LOOP_BATCH)]
        assert counts and counts == batches[:len(counts)], "the loop did not batch its iterations"
    elif maxiter > 4:  # two warm-up iterations, then replays of two
        assert counts == plain_counts == []
        assert len(graphs) == 1 and graphs[0] is not None, "capture was refused"
    assert info_graph == info_plain
    # the same kernels with the same launch shapes: the same rounding
    np.testing.assert_array_equal(to_host(x_graph), to_host(x_plain))
    if maxiter == 300:
        assert info_graph == 0


@pytest.mark.gpu
def test_capture_is_skipped_where_it_does_not_apply(monkeypatch):
    import cupy

    from spla.backends.cuda import solvers

    monkeypatch.setattr(solvers, "CG_LOOP_MAX_ROWS", 0)  # the graph path, which these skip
    graphs = _counting_capture(monkeypatch)
    A = CSRMatrix.from_scipy(poisson2d(16))
    b = cupy.ones(A.n_rows)
    seen = []
    cg(A, b, callback=seen.append)  # a callback needs x every iteration
    cg(A, b, check_every=1)  # a check after every iteration leaves nothing to replay
    cg(A.to_scipy().toarray(), b.get(), capture=True)  # the CPU
    assert graphs == []


@pytest.mark.gpu
@pytest.mark.parametrize("path", ["graph", "loop"])
def test_an_iteration_counter_keeps_the_gpu_paths(monkeypatch, rng, path):
    """spla solve counts with an IterationCounter: cg must still batch its loop or replay its
    graph, and count the iterations a callback checked every iteration would see (the loop
    stops where SciPy does; the graph at the check after it)."""
    import cupy

    from spla.backends.cuda import solvers
    from spla.linalg import IterationCounter

    if path == "graph":
        monkeypatch.setattr(solvers, "CG_LOOP_MAX_ROWS", 0)
    graphs = _counting_capture(monkeypatch)
    counts = _counting_loop(monkeypatch)
    A = CSRMatrix.from_scipy(poisson2d(48))
    b = cupy.asarray(rng.standard_normal(A.n_rows))
    counter = IterationCounter()
    x, info = cg(A, b, rtol=1e-8, callback=counter)
    assert info == 0
    if path == "loop":
        assert graphs == [] and max(counts) > 1, "the counter turned the loop's batches off"
    else:
        assert len(graphs) == 1 and graphs[0] is not None, "the counter turned the replays off"
    seen = []
    check_every = 1 if path == "loop" else DEFAULT_GPU_CHECK_EVERY
    cg(A, b, rtol=1e-8, callback=seen.append, check_every=check_every)
    assert counter.iterations == len(seen)


def test_capture_flag_is_checked_and_harmless_on_the_cpu():
    A = CSRMatrix.from_scipy(poisson2d(10))
    b = np.ones(A.n_rows)
    x_on, info_on = cg(A, b, capture=True)
    x_off, info_off = cg(A, b, capture=False)
    assert info_on == info_off == 0
    np.testing.assert_array_equal(x_on, x_off)
    with pytest.raises(InputError, match="capture"):
        cg(A, b, capture="yes")


class _ReplayOnHost:
    """Stands in for a CUDA graph on the CPU: replaying calls the captured launches again."""

    def __init__(self, launches):
        self.launches = launches
        self.replays = 0

    def launch(self):
        self.replays += 1
        self.launches()


@pytest.mark.parametrize("preconditioner", ["none", "jacobi"])
@pytest.mark.parametrize("maxiter,check_every", [(3, 8), (16, 8), (37, 8), (41, 2), (300, 8), (300, 5)])
def test_the_replay_schedule_keeps_the_iterates_on_the_cpu(monkeypatch, numpy_steps, rng, preconditioner, maxiter,
                                                           check_every):
    """The captured loop's bookkeeping (parity of the state buffers, where replays stop
    for a check) checked with NumPy: a fake graph that re-runs the recorded iterations."""
    replays = []

    def fake_capture(xp, launches):
        replays.append(_ReplayOnHost(launches))
        return replays[-1]

    monkeypatch.setattr(_krylov, "_capture", fake_capture)
    monkeypatch.setattr(_krylov, "wants_capture", lambda *args: True)
    monkeypatch.setattr("spla.linalg._system.System.matvec_into",
                        lambda self: (lambda v, out: np.copyto(out, self.matvec(v))))
    A = CSRMatrix.from_scipy(poisson2d(24))
    M = jacobi(A) if preconditioner == "jacobi" else None
    b = rng.standard_normal(A.n_rows)
    options = dict(rtol=1e-8, maxiter=maxiter, M=M, check_every=check_every)
    x_graph, info_graph = cg(A, b, **options)
    monkeypatch.undo()
    x_plain, info_plain = cg(A, b, **options)
    assert info_graph == info_plain
    np.testing.assert_array_equal(x_graph, x_plain)
    if maxiter >= 16:
        assert replays and replays[0].replays > 0


class _HostProduct:
    """The fused CG product's contract with NumPy, in the arithmetic of the separate steps
    (HostKernels.cg_direction, the SpMV, HostKernels.dot): swapped in for the CUDA backend's
    CgProduct, the loop's two-buffer bookkeeping must give the iterates of the plain loop."""

    def __init__(self, A):
        self.A = A.to_scipy()
        self.calls = {"product": 0, "direction_product": 0}

    def product(self, p, q, pq):
        self.calls["product"] += 1
        q[:] = self.A @ p
        pq[0] = np.dot(p, q)

    def direction_product(self, p_old, z, rho_new, rho_old, p, q, pq):
        self.calls["direction_product"] += 1
        assert p is not p_old and p is not z
        beta = rho_new[0] / rho_old[0] if rho_old[0] != 0 else 0.0
        np.multiply(p_old, p.dtype.type(beta), out=p)
        p += z
        self.product(p, q, pq)
        self.calls["product"] -= 1


@pytest.mark.parametrize("capture", [False, True])
@pytest.mark.parametrize("preconditioner", ["none", "jacobi", "general"])
@pytest.mark.parametrize("maxiter,check_every", [(1, 8), (3, 8), (16, 8), (37, 8), (41, 2), (300, 5)])
def test_the_fused_product_keeps_the_iterates_on_the_cpu(monkeypatch, numpy_steps, rng, capture, preconditioner,
                                                         maxiter, check_every):
    """The loop with a fused product (p formed inside the product launch, alternating between
    two buffers; the first iteration without a direction), with and without the replay schedule,
    gives the plain loop's x and info bit for bit."""
    A = CSRMatrix.from_scipy(poisson2d(24))
    M = {"none": None, "jacobi": jacobi(A), "general": jacobi(A).matvec}[preconditioner]
    if preconditioner == "general":
        from scipy.sparse.linalg import LinearOperator

        M = LinearOperator(A.shape, matvec=M, dtype=np.float64)
    b = rng.standard_normal(A.n_rows)
    options = dict(rtol=1e-8, maxiter=maxiter, M=M, check_every=check_every)
    x_plain, info_plain = cg(A, b, **options)
    products, replays = [], []

    def fused_product(system, K):
        products.append(_HostProduct(system.matrix))
        return products[-1]

    def fake_capture(xp, launches):
        replays.append(_ReplayOnHost(launches))
        return replays[-1]

    monkeypatch.setattr(_krylov, "_fused_product", fused_product)
    monkeypatch.setattr(_krylov, "_capture", fake_capture)
    monkeypatch.setattr(_krylov, "wants_capture", lambda *args: capture and preconditioner != "general")
    x_fused, info_fused = cg(A, b, **options)
    assert info_fused == info_plain
    np.testing.assert_array_equal(x_fused, x_plain)
    calls = products[0].calls
    iterations = calls["product"] + calls["direction_product"]
    assert calls["product"] == 1  # the first iteration only: every later one forms its direction
    assert iterations == maxiter if info_plain == maxiter else 0 < iterations < maxiter
    if capture and preconditioner != "general" and maxiter >= 16:
        assert replays and replays[0].replays > 0


class _HostLoop:
    """The one-launch loop's contract with NumPy, in the arithmetic of the plain loop's steps
    (HostKernels.cg_direction, the system's matvec, HostKernels.dot and cg_step): swapped in for
    the CUDA backend's CgLoop, loop_iterations' bookkeeping (the state layout, the two direction
    buffers, batches, the device's own convergence test) must give the x and info of the plain
    loop checked every iteration, bit for bit."""

    batch = 5  # several launches in a short solve
    batches_uncaptured = False  # as the GPU's

    def __init__(self, matvec, K, jacobi):
        self.matvec, self.K, self.jacobi = matvec, K, jacobi
        self.counts = []

    def run(self, first, count, x, r, z, dinv, directions, q, state, atol):
        self.counts.append(count)
        if state[0] or state[_krylov.LOOP_CONVERGED]:
            return
        K = self.K
        for k in range(first, first + count):
            p = directions[k % 2]
            rho, older = state[2 + 2 * ((k - 1) % 2):][:1], state[2 + 2 * (k % 2):][:1]
            if k > 1:
                p[:] = directions[(k - 1) % 2]
                K.cg_direction(p, z if self.jacobi else r, rho, older)
            q[:] = self.matvec(p)
            K.dot(p, q, state[1:2])
            fresh = state[2 + 2 * (k % 2):4 + 2 * (k % 2)]
            if self.jacobi:
                K.cg_step(x, r, z, p, q, dinv, rho, state[1:2], state, fresh)
            else:
                K.cg_step(x, r, None, p, q, None, rho, state[1:2], state, fresh[:1])
            rr = float(fresh[1 if self.jacobi else 0])
            state[_krylov.LOOP_CONVERGED] = math.sqrt(max(rr, 0.0)) < atol
            state[7] = k
            if state[0] or state[_krylov.LOOP_CONVERGED]:
                return


@pytest.mark.parametrize("batch", [False, True])
@pytest.mark.parametrize("preconditioner", ["none", "jacobi"])
@pytest.mark.parametrize("maxiter", [1, 3, 16, 37, 300])
def test_the_loop_schedule_keeps_the_iterates_on_the_cpu(monkeypatch, numpy_steps, rng, batch, preconditioner, maxiter):
    loops = []

    def fake_loop(system, K, jacobi):
        loops.append(_HostLoop(system.matvec, K, jacobi))
        return loops[-1]

    monkeypatch.setattr(_krylov, "_fused_loop", fake_loop)
    monkeypatch.setattr(_krylov, "wants_capture", lambda *args: batch)
    A = CSRMatrix.from_scipy(poisson2d(24))
    M = jacobi(A) if preconditioner == "jacobi" else None
    b = rng.standard_normal(A.n_rows)
    options = dict(rtol=1e-8, maxiter=maxiter, M=M)
    x_loop, info_loop = cg(A, b, check_every=8, **options)
    monkeypatch.undo()
    x_plain, info_plain = cg(A, b, check_every=1, **options)
    assert info_loop == info_plain
    np.testing.assert_array_equal(x_loop, x_plain)
    (loop,) = loops
    assert loop.jacobi == (preconditioner == "jacobi")
    if batch:
        assert loop.counts == [min(5, maxiter - done) for done in range(0, maxiter, 5)][:len(loop.counts)]
    else:
        assert set(loop.counts) == {1}
    if maxiter == 300:
        assert info_loop == 0 and sum(loop.counts) < 300


def _callback_count(A, b, **options) -> int:
    calls = [0]
    cg(A, b, callback=lambda xk: calls.__setitem__(0, calls[0] + 1), **options)
    return calls[0]


@pytest.mark.parametrize("maxiter", [3, 37, 300])
def test_an_iteration_counter_keeps_the_replays_and_counts_what_a_callback_would(monkeypatch, numpy_steps, rng,
                                                                                  maxiter):
    from spla.linalg import IterationCounter

    seen = []
    wants = _krylov.wants_capture

    def spy(capture, system, callback, general_m, capturable):
        seen.append(callback)
        return wants(capture, system, callback, general_m, capturable)

    monkeypatch.setattr(_krylov, "wants_capture", spy)
    A = CSRMatrix.from_scipy(poisson2d(24))
    b = rng.standard_normal(A.n_rows)
    counter = IterationCounter()
    cg(A, b, rtol=1e-8, maxiter=maxiter, callback=counter)
    assert seen == [None]  # cg decides its path as without a callback
    monkeypatch.undo()
    replays = []

    def fake_capture(xp, launches):
        replays.append(_ReplayOnHost(launches))
        return replays[-1]

    monkeypatch.setattr(_krylov, "_capture", fake_capture)
    monkeypatch.setattr(_krylov, "wants_capture", lambda *args: args[2] is None)
    monkeypatch.setattr("spla.linalg._system.System.matvec_into",
                        lambda self: (lambda v, out: np.copyto(out, self.matvec(v))))
    options = dict(rtol=1e-8, maxiter=maxiter, check_every=8)
    counter = IterationCounter()
    x_counted, info = cg(A, b, callback=counter, **options)
    if maxiter >= 16:
        assert replays and replays[0].replays > 0  # the counter did not turn the replays off
    monkeypatch.undo()
    expected = _callback_count(A, b, **options)  # a callback: no replays, the same stopping iteration
    assert counter.iterations == expected == (maxiter if info else expected)
    np.testing.assert_array_equal(x_counted, cg(A, b, **options)[0])


@pytest.mark.parametrize("maxiter", [3, 37, 300])
def test_an_iteration_counter_keeps_the_loop_batches(monkeypatch, numpy_steps, rng, maxiter):
    from spla.linalg import IterationCounter

    loops = []

    def fake_loop(system, K, jacobi):
        loops.append(_HostLoop(system.matvec, K, jacobi))
        return loops[-1]

    monkeypatch.setattr(_krylov, "_fused_loop", fake_loop)
    monkeypatch.setattr(_krylov, "wants_capture", lambda *args: args[2] is None)
    A = CSRMatrix.from_scipy(poisson2d(24))
    rhs = [rng.standard_normal(A.n_rows) for _ in range(4)]
    counted = []
    for b in rhs:
        counter = IterationCounter()
        cg(A, b, rtol=1e-8, maxiter=maxiter, callback=counter)
        counted.append(counter.iterations)
    assert max(loops[0].counts) == min(_HostLoop.batch, maxiter)  # batches, not a launch an iteration
    monkeypatch.undo()
    # the loop stops where SciPy does: a callback checked every iteration sees as many
    assert counted == [_callback_count(A, b, rtol=1e-8, maxiter=maxiter, check_every=1) for b in rhs]
    if maxiter == 300:  # some stop inside a launch's batch: the count is the kernel's, not the batches'
        assert any(count % _HostLoop.batch for count in counted)


def test_an_iteration_counter_counts_every_solver_on_the_cpu(rng):
    from spla.linalg import IterationCounter, bicgstab, gmres, minres

    A = CSRMatrix.from_scipy(poisson2d(16))
    b = rng.standard_normal(A.n_rows)
    for solver in (cg, bicgstab, gmres, minres):
        counter, calls = IterationCounter(), []
        solver(A, b, rtol=1e-8, callback=counter)
        solver(A, b, rtol=1e-8, callback=calls.append)
        assert counter.iterations == len(calls) > 0, solver.__name__
    assert "iterations" in repr(counter)
