"""Checks run by every rank under ``mpiexec -n P python -m mpi4py dist_worker.py MODE SEED TMPDIR [DEVICE BACKEND]``.

Launched by test_distributed_mpi.py. Every rank builds the same global
inputs from SEED, runs the distributed operation and rank 0 compares the
gathered result with SciPy / networkx / spla.linalg. A failed assertion
raises, ``-m mpi4py`` aborts every rank, and the test sees a non-zero exit.
Rank 0 prints ``CHECKS OK <count>`` at the end.

Modes: ``checks`` (everything), ``gpu`` (a subset on CuPy data), ``cadence``
(which sums over ranks and host reads each solver iteration costs, counted
through a stand-in communicator; DEVICE and BACKEND apply), ``bad-block``
(one rank passes a malformed row block: every rank must raise the same
error; rank 0 prints it once and all exit 3), ``crash`` (one rank raises
outside any agreement point: ``-m mpi4py`` must abort the job).
"""

from __future__ import annotations

import sys
from pathlib import Path

import networkx as nx
import numpy as np
import scipy.io
import scipy.sparse as sp
import scipy.sparse.linalg as spla_scipy
from mpi4py import MPI

import spla
from spla.distributed import (
    Communicator,
    DistCSRMatrix,
    DistributedError,
    bicgstab,
    block_cg,
    cg,
    communicator,
    gmres,
    minres,
    pagerank,
    spmm,
)
from spla.distributed import solvers as dist_solvers
from spla.linalg import _krylov as krylov

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
mode, seed, tmpdir = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
device = sys.argv[4] if len(sys.argv) > 4 else "cpu"
backend = sys.argv[5] if len(sys.argv) > 5 else "auto"
rng = np.random.default_rng(seed)
checks = 0
# one communicator for every matrix: a GPU backend (NCCL) is set up once, not per matrix
if device == "gpu":
    from spla.distributed.comm import select_gpu

    select_gpu(comm)
DIST_COMM = communicator(comm, backend=backend, device=device)


def close(got, want, rtol=1e-10, what=""):
    global checks
    if rank == 0:
        want = np.asarray(want)
        assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
        scale = max(float(np.abs(want).max(initial=0.0)), 1e-300)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale, err_msg=what)
        checks += 1


def random_matrix(m, n, density, empty_rows=0, spd=False):
    A = sp.random(m, n, density=density, random_state=rng, format="lil")
    for i in rng.choice(m, size=empty_rows, replace=False):
        A[i, :] = 0
    A = A.tocsr()
    if spd:
        A = (A @ A.T + sp.eye(m) * (1 + abs(A).sum(axis=1).max())).tocsr()
    return A


def build(A, **kwargs):
    return DistCSRMatrix.from_global(A if rank == 0 else None, DIST_COMM, **kwargs)


def check_spmv(A, what, **kwargs):
    D = build(A, **kwargs)
    x = rng.standard_normal(A.shape[1])
    y = D.gather(D @ D.distribute_vector(x if rank == 0 else None))
    close(y, A @ x, what=f"spmv {what}")
    return D


def check_products():
    square = random_matrix(61, 61, 0.08, empty_rows=5)
    D = check_spmv(square, "square with empty rows")
    check_spmv(random_matrix(37, 83, 0.1, empty_rows=3), "wide")
    check_spmv(random_matrix(83, 37, 0.1), "tall")
    check_spmv(random_matrix(1, 1, 1.0), "1x1 (ranks without rows)")
    check_spmv(sp.csr_matrix((3, 3)), "all empty")
    # every row to the last rank: the others own nothing
    check_spmv(square, "user partition", partition=[0] * size + [61])
    sizes = [0] + [61 // max(size - 1, 1)] * (size - 1) if size > 1 else [61]
    sizes[-1] += 61 - sum(sizes)
    check_spmv(square, "user block sizes", partition=sizes)
    # block diagonal matching the row split: no rank has ghosts
    blocks = sp.block_diag([random_matrix(10, 10, 0.3) + sp.eye(10) for _ in range(size)]).tocsr()
    B = check_spmv(blocks, "block diagonal", partition=[10] * size)
    assert B.ghost_cols.size == 0 and B.plan.send_count == 0, "block diagonal matrix has ghosts"
    X = rng.standard_normal((61, 3))
    Y = D.gather(spmm(D, D.distribute_vector(X if rank == 0 else None)))
    close(Y, square @ X, what="spmm")
    # per-rank row blocks, and the vector algebra
    lo, hi = D.row_offsets[rank], D.row_offsets[rank + 1]
    R = DistCSRMatrix.from_row_blocks(square[lo:hi], DIST_COMM)
    x = rng.standard_normal(61)
    y = R.gather(R @ R.distribute_vector(x if rank == 0 else None))
    close(y, square @ x, what="from_row_blocks")
    v, w = D.distribute_vector(x if rank == 0 else None), D.distribute_vector(2 * x + 1 if rank == 0 else None)
    close(np.array([v.dot(w), v.norm(), v.sum()]),
          [x @ (2 * x + 1), np.linalg.norm(x), x.sum()], what="dot/norm/sum")
    close(v.copy().axpy(0.5, w).gather(), x + 0.5 * (2 * x + 1), what="axpy")


def check_solvers():
    A = random_matrix(90, 90, 0.05, spd=True)
    D = build(A)
    b = rng.standard_normal(90)
    bd = D.distribute_vector(b if rank == 0 else None)
    exact = spla_scipy.spsolve(A.tocsc(), b)
    for solver, kwargs in ((cg, {}), (cg, {"M": "jacobi"}), (bicgstab, {}), (gmres, {"restart": 7}),
                           (minres, {})):
        x, info = solver(D, bd, rtol=1e-10, **kwargs)
        x = D.gather(x)
        single, single_info = getattr(spla.linalg, solver.__name__)(A, b, rtol=1e-10, **{
            k: (spla.linalg.jacobi(A) if k == "M" else v) for k, v in kwargs.items()})
        assert info == single_info == 0, f"{solver.__name__}: info {info}, single-process {single_info}"
        close(x, exact, rtol=1e-7, what=f"{solver.__name__} {kwargs} vs spsolve")
        close(x, single, rtol=1e-8, what=f"{solver.__name__} {kwargs} vs spla.linalg")
    x, info = cg(D, bd, rtol=1e-12, maxiter=2)
    assert info == 2, f"cg with maxiter=2 returned info {info}"
    # indefinite symmetric system for minres; nonsymmetric for bicgstab/gmres
    S = (A - 3.0 * sp.eye(90) * A.diagonal().mean()).tocsr()
    DS = build(S)
    x, info = minres(DS, DS.distribute_vector(b if rank == 0 else None), rtol=1e-10)
    assert info == 0, f"minres indefinite info {info}"
    close(DS.gather(x), spla_scipy.spsolve(S.tocsc(), b), rtol=1e-6, what="minres indefinite")
    N = (A + sp.random(90, 90, density=0.05, random_state=rng)).tocsr()
    DN = build(N)
    for solver in (bicgstab, gmres):
        x, info = solver(DN, DN.distribute_vector(b if rank == 0 else None), rtol=1e-10)
        assert info == 0, f"{solver.__name__} nonsymmetric info {info}"
        close(DN.gather(x), spla_scipy.spsolve(N.tocsc(), b), rtol=1e-7, what=f"{solver.__name__} nonsymmetric")
    Bk = rng.standard_normal((90, 3))
    Bk[:, 1] = 0
    X, info = block_cg(D, D.distribute_vector(Bk if rank == 0 else None), rtol=1e-10)
    assert (info == 0).all(), f"block_cg info {info}"
    close(D.gather(X), spla_scipy.spsolve(A.tocsc(), Bk), rtol=1e-7, what="block_cg")


def check_pagerank():
    G = nx.gnp_random_graph(70, 0.06, seed=int(rng.integers(1 << 30)), directed=True)
    G.add_nodes_from(range(70))
    G.remove_edges_from(list(G.out_edges([int(i) for i in rng.choice(70, 6, replace=False)])))  # dangling nodes
    for u, v in G.edges:
        G[u][v]["weight"] = float(rng.uniform(0.5, 2.0))
    A = nx.to_scipy_sparse_array(G, nodelist=range(70), format="csr")
    D = build(sp.csr_matrix(A))
    personal = rng.uniform(0, 1, 70)
    ranks = D.gather(pagerank(D, alpha=0.9, tol=1e-10, personalization=D.distribute_vector(
        personal if rank == 0 else None, space="range")))
    want = nx.pagerank(G, alpha=0.9, tol=1e-10, personalization=dict(enumerate(personal)))
    close(ranks, [want[i] for i in range(70)], rtol=1e-8, what="pagerank")


def check_mtx():
    A = random_matrix(53, 47, 0.1, empty_rows=4)
    S = random_matrix(40, 40, 0.1)
    S = (S + S.T).tocsr()
    paths = {"general": tmpdir / "general.mtx", "symmetric": tmpdir / "symmetric.mtx",
             "pattern": tmpdir / "pattern.mtx", "integer": tmpdir / "integer.mtx"}
    if rank == 0:
        scipy.io.mmwrite(paths["general"], A)
        scipy.io.mmwrite(paths["symmetric"], S, symmetry="symmetric")
        scipy.io.mmwrite(paths["pattern"], A, field="pattern")
        scipy.io.mmwrite(paths["integer"], sp.csr_matrix(np.round(A.toarray() * 10)), field="integer")
    comm.Barrier()
    for name, want in (("general", A), ("symmetric", S), ("pattern", (A != 0).astype(float)),
                       ("integer", sp.csr_matrix(np.round(A.toarray() * 10)))):
        D = DistCSRMatrix.from_mtx(paths[name], DIST_COMM)
        assert D.shape == want.shape, f"{name}: shape {D.shape}"
        x = rng.standard_normal(want.shape[1])
        close(D.gather(D @ D.distribute_vector(x if rank == 0 else None)), want @ x, what=f"mtx {name}")
    bad = tmpdir / "bad.mtx"
    if rank == 0:
        bad.write_text("%%MatrixMarket matrix coordinate real general\n4 4 3\n1 1 1.0\n9 2 2.0\n3 3 1.0\n")
    comm.Barrier()
    try:
        DistCSRMatrix.from_mtx(bad)
    except DistributedError as exc:
        assert "outside" in str(exc), str(exc)
    else:
        raise AssertionError("an out-of-range .mtx entry was accepted")


def check_mismatch():
    """Row blocks of different widths: the same DistributedError on every rank, no hang."""
    global checks
    block = sp.csr_matrix((2, 10 + (rank == size - 1 and size > 1)))
    try:
        DistCSRMatrix.from_row_blocks(block if size > 1 else sp.csr_matrix((2, 10)), n_cols=None if size > 1 else 9)
    except DistributedError as exc:
        messages = comm.allgather(str(exc))
        assert len(set(messages)) == 1 and "width" in messages[0], messages
        checks += rank == 0
    else:
        raise AssertionError("mismatched row block widths were accepted")


class CountingMPI:
    """An mpi4py communicator that counts every call made through it."""

    def __init__(self, inner, counts):
        self.inner, self.counts = inner, counts

    def __getattr__(self, name):
        attribute = getattr(self.inner, name)
        if not callable(attribute):
            return attribute

        def counted(*args, **kwargs):
            self.counts["mpi calls"] += 1
            return attribute(*args, **kwargs)
        return counted


class CountingCommunicator:
    """Stands in for a matrix's Communicator: runs the real methods, over a counting MPI, and counts
    the sums over ranks (host-returning and in place) that the solvers ask for."""

    def __init__(self, inner: Communicator):
        self.inner = inner
        self.counts: dict = dict.fromkeys(("mpi calls", "host sums", "device sums", "host reads"), 0)
        self.mpi = CountingMPI(inner.mpi, self.counts)

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def allreduce_sum(self, values):
        self.counts["host sums"] += 1
        return Communicator.allreduce_sum(self, values)

    def allreduce_sum_inplace(self, buf):
        self.counts["device sums"] += 1
        return Communicator.allreduce_sum_inplace(self, buf)


def counted_run(D, solve):
    """(result, counts) of ``solve()`` with D's communicator counting and every host read of solver
    state (``_System.fetch``) counted."""
    counting = CountingCommunicator(D.comm)
    fetch = dist_solvers._System.fetch

    def counted_fetch(system, values):
        counting.counts["host reads"] += 1
        return fetch(system, values)

    D.comm, dist_solvers._System.fetch = counting, counted_fetch
    try:
        result = solve()
    finally:
        D.comm, dist_solvers._System.fetch = counting.inner, fetch
    return result, counting.counts


def check_cadence():
    """Each solver iteration costs a fixed number of sums over ranks, done in place (nothing at all
    through MPI on one rank); the host reads solver state only at the check_every cadence; and the
    results match spla.linalg's to rounding (one rank: the same recurrences on the same products)."""
    global checks
    grid = spla.load("gen:poisson2d:12").to_scipy()  # 144 unknowns: no solver converges in 16 iterations
    A = (grid + sp.random(144, 144, density=0.02, random_state=rng) * 0.1).tocsr()
    A = ((A + A.T) * 0.5).tocsr()
    D = build(A)
    D.local_product()  # set up now, over the real communicator
    b = rng.standard_normal(144)
    bd = D.distribute_vector(b if rank == 0 else None)
    # the matrix's own offsets array, so a product's layout check is an identity test, not array_equal
    assert bd.offsets is D.col_offsets and (D @ bd).offsets is D.row_offsets
    every = 4
    to_host = (lambda v: v.get()) if device == "gpu" else np.asarray
    # spla.linalg on the same side: on the GPU the same kernels, so one rank agrees to the last bits
    A_single, b_single = spla.CSRMatrix.from_scipy(A), D.xp.asarray(b)
    # counted per Python call: a captured CG replays its sums from a graph (tested on its own)
    uncaptured = {"capture": False} if device == "gpu" else {}
    for name, solver, kwargs, per_iteration, per_check in (
            ("cg", cg, {"check_every": every, **uncaptured}, 2, 0),
            ("cg jacobi", cg, {"check_every": every, "M": "jacobi", **uncaptured}, 2, 0),
            ("bicgstab", bicgstab, {"check_every": every}, 3, 1)):
        runs = {}
        for maxiter in (8, 16):
            (x, info), counts = counted_run(D, lambda s=solver, m=maxiter, k=kwargs: s(D, bd, rtol=1e-14,
                                                                                       maxiter=m, **k))
            assert info == maxiter, f"{name}: info {info} after {maxiter} iterations"
            runs[maxiter] = counts
            if size == 1:
                assert counts["mpi calls"] == 0, f"{name}: one rank made {counts['mpi calls']} MPI calls"
            single, single_info = getattr(spla.linalg, solver.__name__)(
                A_single, b_single, rtol=1e-14, maxiter=maxiter, check_every=every,
                **({"M": spla.linalg.jacobi(A)} if "M" in kwargs else {}))
            assert single_info == info, f"{name}: info {info}, spla.linalg {single_info}"
            close(D.gather(x), to_host(single), rtol=1e-13 if size == 1 else 1e-9,
                  what=f"{name} vs spla.linalg, {maxiter}")
        more = {key: runs[16][key] - runs[8][key] for key in runs[8]}
        assert more["host sums"] == 0, f"{name}: {more['host sums']} host-returning sums in 8 more iterations"
        assert more["device sums"] == 8 * per_iteration + (8 // every) * per_check, f"{name}: {more}"
        assert more["host reads"] == 8 // every, f"{name}: {more['host reads']} host reads in 8 more iterations"
        checks += rank == 0
    # block_cg: per-column scalars on the device too
    B = rng.standard_normal((144, 2))
    Bd = D.distribute_vector(B if rank == 0 else None)
    runs = {}
    for maxiter in (8, 16):
        (X, info), counts = counted_run(D, lambda m=maxiter: block_cg(D, Bd, rtol=1e-14, maxiter=m,
                                                                       check_every=every))
        assert (info == maxiter).all(), f"block_cg info {info}"
        runs[maxiter] = counts
        single, _ = spla.linalg.block_cg(A_single, D.xp.asarray(B), rtol=1e-14, maxiter=maxiter,
                                         check_every=every)
        close(D.gather(X), to_host(single), rtol=1e-9, what=f"block_cg vs spla.linalg, {maxiter}")
    more = {key: runs[16][key] - runs[8][key] for key in runs[8]}
    assert more["host sums"] == 0 and more["device sums"] == 16 and more["host reads"] == 2, f"block_cg: {more}"
    # gmres and minres: one host read per (inner) iteration, the sums before it in place; minres
    # reads its first scalar (r.M^-1 r) at the start the same way (spla.linalg's minres_iterations)
    for name, solve, per_iteration, at_start in (
            ("gmres", lambda: gmres(D, bd, rtol=1e-14, restart=16, maxiter=1), 3, 0),
            ("minres", lambda: minres(D, bd, rtol=1e-14, maxiter=16), 2, 1)):
        _, counts = counted_run(D, solve)
        assert counts["host reads"] == 16 + at_start, f"{name}: {counts}"
        assert counts["device sums"] == per_iteration * 16 + at_start, f"{name}: {counts}"
        checks += rank == 0
    # a float32 matrix with a float64 right-hand side solves in float64, products included (as spla.linalg)
    D32 = build(A.astype(np.float32))
    x, info = cg(D32, bd, rtol=1e-10, check_every=every)
    single, single_info = spla.linalg.cg(spla.CSRMatrix.from_scipy(A.astype(np.float32)), b_single, rtol=1e-10,
                                         check_every=every)
    assert info == single_info == 0 and x.dtype == np.float64, (info, single_info, x.dtype)
    close(D32.gather(x), to_host(single), rtol=1e-9, what="cg float32 A, float64 b")
    # the local product reuses its exchange buffers: an earlier result must survive a later product
    x1, x2 = rng.standard_normal(144), rng.standard_normal(144)
    y1 = D @ D.distribute_vector(x1 if rank == 0 else None)
    y2 = D @ D.distribute_vector(x2 if rank == 0 else None)
    close(D.gather(y1), A @ x1, what="first of two products")
    close(D.gather(y2), A @ x2, what="second of two products")
    assert (D.local_product().fast is not None) == (device == "gpu" and size == 1), "fast path"
    if device == "gpu" and size == 1:  # one rank on the GPU: cg runs without Python between checks
        from spla.backends.cuda import solvers as cuda_solvers

        captured, looped = [], []
        capture, run = krylov._capture, cuda_solvers.CgLoop.run  # what spla.linalg and spla.distributed share

        def counted_capture(xp, launches):
            graph = capture(xp, launches)
            captured.append(graph is not None)
            return graph

        def counted_loop(self, first, count, *buffers):
            looped.append(count)
            return run(self, first, count, *buffers)

        krylov._capture, cuda_solvers.CgLoop.run = counted_capture, counted_loop
        try:
            looping, info = cg(D, bd, rtol=1e-14, maxiter=30, check_every=every)  # small: the one-launch loop
            limit = cuda_solvers.CG_LOOP_MAX_ROWS
            cuda_solvers.CG_LOOP_MAX_ROWS = 0
            try:
                replayed, replayed_info = cg(D, bd, rtol=1e-14, maxiter=30, check_every=every)  # the graph
            finally:
                cuda_solvers.CG_LOOP_MAX_ROWS = limit
        finally:
            krylov._capture, cuda_solvers.CgLoop.run = capture, run
        launched, launched_info = cg(D, bd, rtol=1e-14, maxiter=30, check_every=every, capture=False)
        assert looped == [30] and captured == [True], f"loop launches {looped}, capture attempts {captured}"
        assert info == replayed_info == launched_info == 30, (info, replayed_info, launched_info)
        close(to_host(replayed.local), to_host(launched.local), rtol=1e-13, what="cg replayed vs launched")
        # the loop sums its dot products in another order: the same iterates to rounding
        close(to_host(looping.local), to_host(launched.local), rtol=1e-9, what="cg loop vs launched")
        single = spla.spmv(D.diag, D.xp.asarray(x1))
        close(to_host(y1.local), to_host(single), rtol=0, what="1-rank product vs spla.spmv")


if mode == "checks":
    check_products()
    check_solvers()
    check_pagerank()
    check_mtx()
    check_mismatch()
elif mode == "gpu":
    check_products()
    check_solvers()
    check_pagerank()
elif mode == "cadence":
    check_cadence()
elif mode == "bad-block":
    # the last rank's row names column 7 of a 5-column matrix
    bad = sp.csr_matrix((1, 5))
    bad.indices, bad.data, bad.indptr = np.array([7 if rank == size - 1 else 0]), np.ones(1), np.array([0, 1])
    try:
        DistCSRMatrix.from_row_blocks(bad)
    except DistributedError as exc:
        if rank == 0:
            print(f"error: {exc}", file=sys.stderr)
        sys.exit(3)
    raise AssertionError("a column index past the matrix was accepted")
elif mode == "crash":
    if rank == size - 1:
        raise RuntimeError("deliberate failure outside any agreement point")
    comm.Barrier()  # the other ranks wait here until -m mpi4py aborts the job
else:
    raise SystemExit(f"unknown mode {mode}")

total = comm.reduce(checks, root=0)
if rank == 0:
    print(f"CHECKS OK {total}")
