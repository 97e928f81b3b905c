"""Checks run by every rank under ``mpiexec -n P python -m mpi4py dist_worker.py MODE SEED TMPDIR [DEVICE BACKEND]``.

Launched by test_distributed_mpi.py. Every rank builds the same global
inputs from SEED, runs the distributed operation and rank 0 compares the
gathered result with SciPy / networkx / spla.linalg. A failed assertion
raises, ``-m mpi4py`` aborts every rank, and the test sees a non-zero exit.
Rank 0 prints ``CHECKS OK <count>`` at the end.

Modes: ``checks`` (everything), ``gpu`` (a subset on CuPy data), ``bad-block``
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
