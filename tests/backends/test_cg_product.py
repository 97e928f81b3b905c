"""CG's fused product (kernels/solver_cg_product.cu) against SciPy, and CG through it.

The kernel writes q = A p and p.q in one launch, and from the second iteration forms the
direction p = z + beta p_old inside it. Checked against a float64 SciPy product of the rounded
inputs, and bit for bit against spla.spmv with the same row kernel: q of the formed direction
must equal spla.spmv of the stored direction, which holds only if every thread that formed an
entry got the bits its owner stored. Outputs are NaN-poisoned before each call.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as sla

from spla import CSRMatrix, linalg
from spla.linalg import _krylov
from spla.ops import spmv as ops_spmv
from spla.planning import dia, tune

pytestmark = pytest.mark.gpu

cupy = pytest.importorskip("cupy")
solvers = pytest.importorskip("spla.backends.cuda.solvers")

ROW_KERNELS = ["scalar", "warp:2", "warp:4", "warp:32"]
DTYPES = [np.float32, np.float64]
INDEX_DTYPES = [np.int32, np.int64]


def _poisson2d(n):
    one = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
    return (sp.kron(sp.identity(n), one) + sp.kron(one, sp.identity(n))).tocsr()


def _empty_rows(rng, n=900):
    """Square, a third of the rows empty (the last one too), lengths 1..40 elsewhere."""
    lengths = rng.integers(1, 41, n)
    lengths[rng.choice(n, n // 3, replace=False)] = 0
    lengths[-1] = 0
    indptr = np.concatenate(([0], np.cumsum(lengths)))
    indices = np.concatenate([np.sort(rng.choice(n, size=k, replace=False)) for k in lengths])
    return sp.csr_matrix((rng.uniform(-1, 1, indptr[-1]), indices, indptr), shape=(n, n))


def _spd(rng, n=700):
    """Random symmetric, strictly diagonally dominant (so positive definite), rows of 1 to ~30 entries."""
    B = sp.random(n, n, density=8 / n, format="csr", random_state=rng, data_rvs=lambda k: rng.uniform(-1, 1, k))
    S = (B + B.T).tocsr()
    return (S + sp.diags(np.asarray(abs(S).sum(axis=1)).ravel() + 1.0)).tocsr()


CASES = {
    "poisson2d": lambda rng: _poisson2d(37),
    "empty-rows": _empty_rows,
    "spd": _spd,
    "1x1": lambda rng: sp.csr_matrix(np.array([[rng.uniform(0.5, 2)]])),
    "block-plus-one": lambda rng: _poisson2d(17)[:257, :257].tocsr(),  # one row past a block
}


def _bound(A_host, kernel, dtype, index_dtype):
    A = CSRMatrix.from_scipy(A_host, dtype=dtype, index_dtype=index_dtype).to_device()
    launcher = ops_spmv.launcher(A, kernel)
    product = solvers.DeviceKernels(A.n_rows, dtype).cg_product(launcher)
    assert product is not None, f"{kernel} should fuse"
    return A, launcher, product


def _check_product(A, kernel, p, q, pq, what):
    """q against SciPy in float64 (per-row error bound) and bit for bit against spla.spmv with the
    same kernel; pq against p.(A p) in float64."""
    dtype = A.dtype
    host = A.to_host().to_scipy().astype(np.float64)
    p64 = cupy.asnumpy(p).astype(np.float64)
    got = cupy.asnumpy(q)
    assert np.isfinite(got).all(), f"{what}: rows {np.flatnonzero(~np.isfinite(got))[:10]} never written"
    eps = np.finfo(dtype).eps
    lengths = np.diff(host.indptr)
    scale = abs(host) @ np.abs(p64)
    bound = 16 * eps * np.sqrt(lengths + 1.0) * scale + np.finfo(np.float64).tiny
    assert (np.abs(got - host @ p64) <= bound).all(), f"{what}: q differs from SciPy"
    np.testing.assert_array_equal(got, cupy.asnumpy(ops_spmv.spmv(A, p, kernel=kernel)),
                                  err_msg=f"{what}: q is not the row kernel's product")
    reference = float(p64 @ (host @ p64))
    magnitude = float(np.abs(p64) @ scale)
    assert abs(float(pq[0]) - reference) <= 16 * eps * np.sqrt(lengths.max(initial=0) + 1.0) * magnitude + 1e-300, \
        f"{what}: p.q {float(pq[0])!r}, expected {reference!r}"


PARAMS = [(case, dtype, index_dtype, kernel) for case in CASES for dtype in DTYPES for index_dtype in INDEX_DTYPES
          for kernel in ROW_KERNELS]
# dia where a matrix has diagonals, over its values and (dia-palette) over a palette's codes
PARAMS += [(case, dtype, np.int32, kernel) for case in ("poisson2d", "block-plus-one") for dtype in DTYPES
           for kernel in ("dia", "dia-palette")]


def _ids(params):
    return "-".join(np.dtype(p).name if isinstance(p, type) else str(p) for p in params)


@pytest.mark.parametrize("case,dtype,index_dtype,kernel", PARAMS, ids=[_ids(p) for p in PARAMS])
def test_fused_product_matches_scipy(monkeypatch, rng, case, dtype, index_dtype, kernel):
    palette = kernel == "dia-palette"
    if kernel.startswith("dia"):  # dia's palette from any size, or none
        monkeypatch.setattr(dia, "PALETTE_MIN_BYTES", 0 if palette else 2**62)
        kernel = "dia"
    A, _, product = _bound(CASES[case](rng), kernel, dtype, index_dtype)
    diagonals = product.rows.diagonals  # (structure, palette or None) where the product reads dia's
    assert (diagonals is not None) == (kernel == "dia")
    assert (diagonals is not None and diagonals[1] is not None) == palette
    n = A.n_rows
    p = cupy.asarray(rng.uniform(-1, 1, n).astype(dtype))
    q = cupy.full(n, np.nan, dtype=dtype)
    pq = cupy.full(1, np.nan)
    product.product(p, q, pq)
    _check_product(A, kernel, p, q, pq, f"{case}/{kernel} first")

    # a later iteration: p = z + beta p_old formed inside the product
    p_old = cupy.asarray(rng.uniform(-1, 1, n).astype(dtype))
    z = cupy.asarray(rng.uniform(-1, 1, n).astype(dtype))
    kept = (p_old.copy(), z.copy())
    rho_new, rho_old = cupy.asarray([rng.uniform(0.1, 2)]), cupy.asarray([rng.uniform(0.1, 2)])
    p_new = cupy.full(n, np.nan, dtype=dtype)
    q.fill(np.nan)
    pq.fill(np.nan)
    product.direction_product(p_old, z, rho_new, rho_old, p_new, q, pq)
    beta = dtype(float(rho_new[0]) / float(rho_old[0]))  # the formula's beta, rounded to the vectors' type
    z64, scaled = cupy.asnumpy(z).astype(np.float64), float(beta) * cupy.asnumpy(p_old).astype(np.float64)
    got = cupy.asnumpy(p_new)
    eps = np.finfo(dtype).eps
    assert (np.abs(got - (z64 + scaled)) <= eps * (np.abs(z64) + np.abs(scaled))).all(), \
        f"{case}/{kernel}: the direction is not z + beta p_old"
    assert all(bool((a == b).all()) for a, b in zip((p_old, z), kept)), "p_old or z was written"
    _check_product(A, kernel, p_new, q, pq, f"{case}/{kernel} direction")

    # rho_old == 0: beta is 0 (the direction update's guard), so the direction is z itself
    rho_old.fill(0.0)
    product.direction_product(p_old, z, rho_new, rho_old, p_new, q, pq)
    np.testing.assert_array_equal(cupy.asnumpy(p_new), cupy.asnumpy(z))


@pytest.mark.parametrize("kernel", ["scalar", "warp:2"])
def test_fused_product_past_the_grid_cap(rng, kernel):
    """More rows than the capped grid has threads (rows walked grid-stride, thousands of
    partials summed by the last block): the same product."""
    capped_rows = solvers.CG_PRODUCT_WAVES * solvers.DeviceKernels(1, np.float64).resident_blocks * solvers.SOLVER_BLOCK
    side = int(np.ceil(np.sqrt(1.2 * capped_rows)))  # ~1.1k on an H200: 1.3M rows
    A, launcher, product = _bound(_poisson2d(side), kernel, np.float64, np.int32)
    assert product.grid[0] < launcher.grid[0], "the matrix is too small to reach the cap"
    n = A.n_rows
    p_old = cupy.asarray(rng.uniform(-1, 1, n))
    z = cupy.asarray(rng.uniform(-1, 1, n))
    p, q, pq = cupy.full(n, np.nan), cupy.full(n, np.nan), cupy.full(1, np.nan)
    product.direction_product(p_old, z, cupy.asarray([0.7]), cupy.asarray([1.3]), p, q, pq)
    _check_product(A, kernel, p, q, pq, f"{kernel} past the cap")
    pq_again = cupy.full(1, np.nan)
    product.direction_product(p_old, z, cupy.asarray([0.7]), cupy.asarray([1.3]), p, q, pq_again)
    assert float(pq_again[0]) == float(pq[0]), "the reduction is not deterministic"


@pytest.mark.parametrize("kernel", ["vector", "vector:4", "adaptive", "adaptive2", "segmented", "cusparse"])
def test_other_kernels_keep_the_separate_launches(kernel):
    A = CSRMatrix.from_scipy(_poisson2d(20)).to_device()
    assert solvers.DeviceKernels(A.n_rows, np.float64).cg_product(ops_spmv.launcher(A, kernel)) is None


def test_what_does_not_fit_is_refused(rng):
    rectangular = CSRMatrix.from_scipy(sp.random(50, 40, density=0.1, format="csr", random_state=rng)).to_device()
    assert solvers.DeviceKernels(50, np.float64).cg_product(ops_spmv.launcher(rectangular, "scalar")) is None
    A = CSRMatrix.from_scipy(_poisson2d(8)).to_device()
    assert solvers.DeviceKernels(64, np.float32).cg_product(ops_spmv.launcher(A, "scalar")) is None
    assert solvers.DeviceKernels(63, np.float64).cg_product(ops_spmv.launcher(A, "scalar")) is None
    variant = ops_spmv.launcher(A, "scalar").variant(ops_spmv.launcher(A, "scalar").kernel)
    assert solvers.DeviceKernels(64, np.float64).cg_product(variant) is None


def _count_products(monkeypatch):
    made = []
    original = solvers.DeviceKernels.cg_product

    def counted(self, launcher):
        made.append(original(self, launcher))
        return made[-1]

    monkeypatch.setattr(solvers.DeviceKernels, "cg_product", counted)
    return made


CG_PARAMS = [(case, dtype, index_dtype, kernel, precond) for case in ("poisson2d", "spd")
             for dtype in DTYPES for index_dtype in INDEX_DTYPES for kernel in ("scalar", "warp:4", "vector:4", "dia")
             for precond in ("none", "jacobi") if kernel != "dia" or case == "poisson2d"]


@pytest.mark.parametrize("case,dtype,index_dtype,kernel,precond", CG_PARAMS, ids=[_ids(p) for p in CG_PARAMS])
def test_cg_through_the_fused_product_matches_scipy(monkeypatch, rng, case, dtype, index_dtype, kernel, precond):
    """CG iterates with auto running ``kernel`` (fused for the row kernels, the separate
    launches for vector): SciPy's iterates step by step, and captured == uncaptured. The
    one-launch loop is turned off: these systems are small enough to take it
    (tests/backends/test_cg_loop.py)."""
    monkeypatch.setattr(solvers, "CG_LOOP_MAX_ROWS", 0)
    made = _count_products(monkeypatch)
    graphs = []
    capture = _krylov._capture

    def counted_capture(xp, launches):
        graphs.append(capture(xp, launches))
        return graphs[-1]

    monkeypatch.setattr(_krylov, "_capture", counted_capture)
    A_host = CASES[case](rng).astype(dtype)
    A = CSRMatrix.from_scipy(A_host, index_dtype=index_dtype).to_device()
    tune.set_choice(A, kernel, "measured")  # what auto runs for A
    M = linalg.jacobi(A) if precond == "jacobi" else None
    b_host = rng.standard_normal(A.n_rows).astype(dtype)
    b = cupy.asarray(b_host)

    seen, reference = [], []
    # 12 iterations stay short of rtol on both systems (the random one converges in ~17 with Jacobi)
    x, info = linalg.cg(A, b, rtol=1e-12, maxiter=12, M=M, check_every=1, callback=lambda xk: seen.append(xk.get()))
    assert info == 12 and len(made) == 1 and (made[0] is not None) == (not kernel.startswith("vector"))
    M_host = None if M is None else sp.diags((1.0 / A_host.diagonal()).astype(dtype))
    sla.cg(A_host, b_host, rtol=1e-12, maxiter=12, M=M_host, callback=lambda xk: reference.append(xk.copy()))
    assert len(reference) == 12
    # the GPU's dot products sum in another order (and in float64 for float32 vectors); an
    # indexing mistake is an O(1) error
    rtol = 1e-9 if dtype == np.float64 else 1e-4
    for k in (0, 5, 11):
        scale = np.abs(reference[k]).max()
        np.testing.assert_allclose(seen[k], reference[k], rtol=rtol, atol=rtol * scale)

    options = dict(rtol=1e-30, maxiter=41, M=M, check_every=8)
    x_plain, info_plain = linalg.cg(A, b, capture=False, **options)
    assert graphs == []
    x_graph, info_graph = linalg.cg(A, b, capture=True, **options)
    assert len(graphs) == 1 and graphs[0] is not None, "capture was refused"
    assert info_plain == info_graph
    np.testing.assert_array_equal(x_graph.get(), x_plain.get())
