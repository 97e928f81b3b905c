"""CG with its iterations captured into a CUDA graph gives the iterates of the uncaptured loop."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import to_host
from precond_systems import poisson2d

from spla import CSRMatrix
from spla.errors import InputError
from spla.linalg import _krylov, cg, jacobi


def _counting_capture(monkeypatch):
    graphs = []
    original = _krylov._capture

    def capture(xp, launches):
        graph = original(xp, launches)
        graphs.append(graph)
        return graph

    monkeypatch.setattr(_krylov, "_capture", capture)
    return graphs


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("preconditioner", ["none", "jacobi"])
@pytest.mark.parametrize("maxiter,check_every", [(5, 8), (16, 8), (37, 8), (41, 2), (300, 8)])
def test_captured_cg_gives_the_uncaptured_iterates(monkeypatch, rng, dtype, preconditioner, maxiter, check_every):
    import cupy

    graphs = _counting_capture(monkeypatch)
    A = CSRMatrix.from_scipy(poisson2d(48).astype(dtype))
    M = jacobi(A) if preconditioner == "jacobi" else None
    b = cupy.asarray(rng.standard_normal(A.n_rows).astype(dtype))
    options = dict(rtol=1e-6, maxiter=maxiter, M=M, check_every=check_every)
    x_plain, info_plain = cg(A, b, capture=False, **options)
    assert graphs == []
    x_graph, info_graph = cg(A, b, capture=True, **options)
    if maxiter > 4:  # two warm-up iterations, then replays of two
        assert len(graphs) == 1 and graphs[0] is not None, "capture was refused"
    assert info_graph == info_plain
    # the same kernels with the same launch shapes: the same rounding
    np.testing.assert_array_equal(to_host(x_graph), to_host(x_plain))
    if maxiter == 300:
        assert info_graph == 0


@pytest.mark.gpu
def test_capture_is_skipped_where_it_does_not_apply(monkeypatch):
    import cupy

    graphs = _counting_capture(monkeypatch)
    A = CSRMatrix.from_scipy(poisson2d(16))
    b = cupy.ones(A.n_rows)
    seen = []
    cg(A, b, callback=seen.append)  # a callback needs x every iteration
    cg(A, b, check_every=1)  # a check after every iteration leaves nothing to replay
    cg(A.to_scipy().toarray(), b.get(), capture=True)  # the CPU
    assert graphs == []


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
def test_the_replay_schedule_keeps_the_iterates_on_the_cpu(monkeypatch, rng, preconditioner, maxiter, check_every):
    """The captured loop's bookkeeping (parity of the state buffers, where replays stop
    for a check) checked with NumPy: a fake graph that re-runs the recorded iterations."""
    replays = []

    def fake_capture(xp, launches):
        replays.append(_ReplayOnHost(launches))
        return replays[-1]

    monkeypatch.setattr(_krylov, "_capture", fake_capture)
    monkeypatch.setattr(_krylov, "_wants_capture", lambda *args: True)
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
def test_the_fused_product_keeps_the_iterates_on_the_cpu(monkeypatch, rng, capture, preconditioner, maxiter,
                                                         check_every):
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
    monkeypatch.setattr(_krylov, "_wants_capture", lambda *args: capture and preconditioner != "general")
    x_fused, info_fused = cg(A, b, **options)
    assert info_fused == info_plain
    np.testing.assert_array_equal(x_fused, x_plain)
    calls = products[0].calls
    iterations = calls["product"] + calls["direction_product"]
    assert calls["product"] == 1  # the first iteration only: every later one forms its direction
    assert iterations == maxiter if info_plain == maxiter else 0 < iterations < maxiter
    if capture and preconditioner != "general" and maxiter >= 16:
        assert replays and replays[0].replays > 0
