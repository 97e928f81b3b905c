"""CG's one-launch loop (kernels/solver_cg_product.cu, spla_cg_loop; CgLoop) on the GPU.

Whole CG iterations run in one cooperative launch with grid barriers between the product and
the step. Checked step by step against SciPy's iterates (a callback makes every launch one
iteration), batched launches against one-iteration launches bit for bit, a grid that walks the
rows grid-stride against the launch-per-step loop, breakdown, and where the loop is refused.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as sla

from spla import CSRMatrix, linalg
from spla.planning import dia, tune

pytestmark = pytest.mark.gpu

cupy = pytest.importorskip("cupy")
solvers = pytest.importorskip("spla.backends.cuda.solvers")

DTYPES = [np.float32, np.float64]


def _poisson2d(n):
    one = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
    return (sp.kron(sp.identity(n), one) + sp.kron(one, sp.identity(n))).tocsr()


def _spd(rng, n=700):
    """Random symmetric, strictly diagonally dominant (so positive definite), rows of 1 to ~30 entries."""
    B = sp.random(n, n, density=8 / n, format="csr", random_state=rng, data_rvs=lambda k: rng.uniform(-1, 1, k))
    S = (B + B.T).tocsr()
    return (S + sp.diags(np.asarray(abs(S).sum(axis=1)).ravel() + 1.0)).tocsr()


CASES = {"poisson2d": lambda rng: _poisson2d(37), "spd": _spd}


def _record_loops(monkeypatch):
    """Every CgLoop a solve builds (None where it was refused), each launch's iteration count,
    and the last iteration run after each launch (state[7])."""
    made, counts, last = [], [], []
    cg_loop, run = solvers.DeviceKernels.cg_loop, solvers.CgLoop.run

    def building(self, launcher, jacobi):
        made.append(cg_loop(self, launcher, jacobi))
        return made[-1]

    def counted(self, first, count, *buffers):
        counts.append(count)
        run(self, first, count, *buffers)
        last.append(int(buffers[-2][7].get()))

    monkeypatch.setattr(solvers.DeviceKernels, "cg_loop", building)
    monkeypatch.setattr(solvers.CgLoop, "run", counted)
    return made, counts, last


def _device(A_host, dtype, index_dtype=np.int32, kernel=None):
    A = CSRMatrix.from_scipy(A_host.astype(dtype), index_dtype=index_dtype).to_device()
    if kernel is not None:
        tune.set_choice(A, kernel, "measured")  # what auto runs for A
    return A


PARAMS = [(case, dtype, index_dtype, kernel, precond) for case in CASES for dtype in DTYPES
          for index_dtype in (np.int32, np.int64) for kernel in ("scalar", "warp:4", "warp:32", "dia")
          for precond in ("none", "jacobi") if kernel != "dia" or case == "poisson2d"]


def _ids(params):
    return "-".join(np.dtype(p).name if isinstance(p, type) else str(p) for p in params)


@pytest.mark.parametrize("case,dtype,index_dtype,kernel,precond", PARAMS, ids=[_ids(p) for p in PARAMS])
def test_loop_follows_scipy_and_batches_bit_for_bit(monkeypatch, rng, case, dtype, index_dtype, kernel, precond):
    made, counts, _ = _record_loops(monkeypatch)
    A_host = CASES[case](rng).astype(dtype)
    A = _device(A_host, dtype, index_dtype, kernel)
    M = linalg.jacobi(A) if precond == "jacobi" else None
    b_host = rng.standard_normal(A.n_rows).astype(dtype)
    b = cupy.asarray(b_host)

    seen, reference = [], []
    # 12 iterations stay short of rtol on both systems; the callback makes each launch one iteration
    _, info = linalg.cg(A, b, rtol=1e-12, maxiter=12, M=M, check_every=1, callback=lambda xk: seen.append(xk.get()))
    assert info == 12 and len(made) == 1 and made[0] is not None, "the loop did not take the solve"
    assert counts == [1] * 12
    M_host = None if M is None else sp.diags((1.0 / A_host.diagonal()).astype(dtype))
    sla.cg(A_host, b_host, rtol=1e-12, maxiter=12, M=M_host, callback=lambda xk: reference.append(xk.copy()))
    # the loop's dot products sum in another order (and in float64 for float32 vectors); an
    # indexing or synchronisation mistake is an O(1) error
    rtol = 1e-9 if dtype == np.float64 else 1e-4
    for k in (0, 1, 5, 11):
        scale = np.abs(reference[k]).max()
        np.testing.assert_allclose(seen[k], reference[k], rtol=rtol, atol=rtol * scale, err_msg=f"iteration {k + 1}")

    options = dict(rtol=1e-30, maxiter=41, M=M, check_every=8)
    counts.clear()
    x_one, info_one = linalg.cg(A, b, capture=False, **options)
    assert counts == [1] * 41
    counts.clear()
    x_batched, info_batched = linalg.cg(A, b, capture=True, **options)
    assert counts == [41]  # one launch: the device tests convergence itself
    assert info_one == info_batched == 41
    np.testing.assert_array_equal(x_batched.get(), x_one.get())


@pytest.mark.parametrize("kernel", ["scalar", "warp:4"])
@pytest.mark.parametrize("precond", ["none", "jacobi"])
def test_a_small_grid_walks_the_rows(monkeypatch, rng, kernel, precond):
    """One block an SM: fewer threads than rows (grid-stride in both phases, every block's partial
    in the barrier's sums). The iterates of the launch-per-step loop, to rounding."""
    monkeypatch.setattr(solvers, "CG_LOOP_BLOCKS_PER_SM", 1)
    made, _, _ = _record_loops(monkeypatch)
    A = _device(_poisson2d(200), np.float64, kernel=kernel)
    M = linalg.jacobi(A) if precond == "jacobi" else None
    b = cupy.asarray(rng.standard_normal(A.n_rows))
    x_loop, info_loop = linalg.cg(A, b, rtol=1e-30, maxiter=60, M=M)
    (loop,) = made
    assert loop.lanes == 1, "a row's lanes are not cut to the grid"
    assert loop.grid[0] * solvers.SOLVER_BLOCK < A.n_rows, "the grid covers every row in one pass"
    monkeypatch.setattr(solvers, "CG_LOOP_MAX_ROWS", 0)
    x_steps, info_steps = linalg.cg(A, b, rtol=1e-30, maxiter=60, M=M)
    assert made[1:] == [None]
    assert info_loop == info_steps == 60
    np.testing.assert_allclose(x_loop.get(), x_steps.get(), rtol=1e-9, atol=1e-9 * float(abs(x_steps).max()))


@pytest.mark.parametrize("dtype", DTYPES)
def test_loop_stops_where_scipy_would_and_repeats(monkeypatch, rng, dtype):
    """To rtol: the true residual meets it, the loop stops at the iteration of the launch-per-step
    loop checked every iteration (to rounding), and a second solve gives the same bits (the sums'
    order is fixed by the grid)."""
    made, _, last = _record_loops(monkeypatch)
    A_host = _poisson2d(64)
    A = _device(A_host, dtype)
    b = cupy.asarray(rng.standard_normal(A.n_rows).astype(dtype))
    rtol = 1e-8 if dtype == np.float64 else 1e-4
    x, info = linalg.cg(A, b, rtol=rtol)
    assert info == 0 and made[0] is not None
    residual = np.linalg.norm(b.get() - A_host @ x.get().astype(np.float64)) / np.linalg.norm(b.get())
    assert residual <= 2 * rtol
    loop_iterations = last[-1]
    monkeypatch.setattr(solvers, "CG_LOOP_MAX_ROWS", 0)
    steps = []
    linalg.cg(A, b, rtol=rtol, check_every=1, callback=steps.append)
    assert abs(loop_iterations - len(steps)) <= 1, (loop_iterations, len(steps))
    monkeypatch.undo()
    x_again, _ = linalg.cg(A, b, rtol=rtol)
    np.testing.assert_array_equal(x_again.get(), x.get())


@pytest.mark.parametrize("loop", [True, False])
def test_breakdown_is_reported_like_the_step_loop(monkeypatch, loop):
    """A zero matrix: p.Ap = 0 on the first iteration, the flag is set and x stays 0."""
    if not loop:
        monkeypatch.setattr(solvers, "CG_LOOP_MAX_ROWS", 0)
    made, _, _ = _record_loops(monkeypatch)
    n = 300
    A = _device(sp.csr_matrix((n, n)), np.float64, kernel="scalar")
    x, info = linalg.cg(A, cupy.ones(n), maxiter=20)
    assert (made[0] is not None) == loop
    assert info == -1
    assert not x.get().any()


def test_where_the_loop_is_refused(monkeypatch, rng):
    made, _, _ = _record_loops(monkeypatch)
    A_host = _poisson2d(30)
    b = cupy.asarray(rng.standard_normal(900))
    x_reference = sla.spsolve(A_host.tocsc(), b.get())

    def solved(A, expect_loop):
        made.clear()
        x, info = linalg.cg(A, b, rtol=1e-10)
        assert info == 0 and (made[0] is not None) == expect_loop
        np.testing.assert_allclose(x.get(), x_reference, rtol=1e-7, atol=1e-7)

    solved(_device(A_host, np.float64, kernel="warp:2"), True)
    solved(_device(A_host, np.float64, kernel="vector:4"), False)  # not a row kernel: no fused product either
    monkeypatch.setattr(solvers, "CG_LOOP_MAX_ROWS", 899)  # one row too many
    solved(_device(A_host, np.float64, kernel="warp:2"), False)
    monkeypatch.setattr(solvers, "CG_LOOP_MAX_ROWS", 900)
    solved(_device(A_host, np.float64, kernel="warp:2"), True)
    monkeypatch.setattr(solvers.CgLoop, "launchable", lambda self: False)  # a device that refuses the launch
    solved(_device(A_host, np.float64, kernel="warp:2"), False)


@pytest.mark.parametrize("palette", [False, True], ids=["values", "palette"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_the_loop_over_dia_gives_the_scalar_loops_bits(monkeypatch, rng, dtype, palette):
    """Where auto runs dia the loop reads A's diagonals (through the palette where dia reads one), a
    thread a row on the scalar kernel's grid, each row's diagonals in the CSR row's order: 30
    iterations give the bits of the loop over the CSR rows."""
    monkeypatch.setattr(dia, "PALETTE_MIN_BYTES", 0 if palette else 2**62)
    made, _, _ = _record_loops(monkeypatch)
    A_host = _poisson2d(90)
    A_host.data *= rng.choice([1.0, 1.5, 3.0], A_host.nnz)  # a few coefficients (not symmetric: CG's steps only)
    b = cupy.asarray(rng.standard_normal(A_host.shape[0]).astype(dtype))
    results = []
    for kernel in ("dia", "scalar"):
        x, info = linalg.cg(_device(A_host, dtype, kernel=kernel), b, rtol=1e-30, maxiter=30)
        assert info == 30 and made[-1] is not None
        results.append(x.get())
    over_dia, over_csr = made
    assert over_dia.rows.diagonals is not None and over_csr.rows.diagonals is None
    assert (over_dia.rows.diagonals[1] is not None) == palette
    assert over_dia.grid == over_csr.grid
    np.testing.assert_array_equal(results[0].view(np.uint8), results[1].view(np.uint8))
