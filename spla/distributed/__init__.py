"""Distributed sparse linear algebra over MPI (mpi4py) and NCCL: SPMD, one process per rank.

Launch a script under ``mpiexec -n P python -m mpi4py script.py`` (``-m
mpi4py`` aborts every rank when one raises, instead of leaving the others
waiting). Every rank runs the same calls:

>>> from spla.distributed import DistCSRMatrix, cg             # doctest: +SKIP
>>> A = DistCSRMatrix.from_global(A_global if rank == 0 else None)
>>> b = A.distribute_vector(b_global if rank == 0 else None)
>>> x, info = cg(A, b, rtol=1e-8)
>>> x_global = A.gather(x)                   # NumPy on rank 0, None elsewhere

- :class:`DistCSRMatrix`: contiguous row blocks (balanced by ``nnz + rows``
  or given), each split into a diagonal and an off-diagonal block with
  compressed ghost columns, and a ghost-exchange plan built once.
  Constructors ``from_global``, ``from_row_blocks``, ``from_mtx`` (parallel
  read by byte ranges). ``A @ x`` overlaps the exchange with the diagonal
  block's product; local products run through :func:`spla.spmv` /
  :func:`spla.spmm` (spla's GPU kernels on CuPy data).
- :class:`DistVector`: a rank's slice; ``dot``, ``norm``, ``axpy`` (global
  reductions through one Allreduce).
- Solvers :func:`cg`, :func:`bicgstab`, :func:`gmres`, :func:`minres`,
  :func:`block_cg` with :mod:`spla.linalg`'s signatures and ``info`` codes;
  :func:`pagerank` with networkx's semantics.
- :func:`communicator`: the MPI backend (host data; CUDA-aware MPI or host
  staging for CuPy data) or NCCL (CuPy data, one rank per GPU), picked from
  where the data lives (``device="gpu"``) unless ``backend=`` names one.
- Failures: set-up steps end with a collective agreement, so bad input on
  one rank raises the same :class:`DistributedError` on every rank.

Needs ``pip install 'spla[distributed]'`` (mpi4py and MPICH from PyPI).
"""

from ..errors import InputError
from .comm import BACKENDS, Communicator, DistributedError, communicator
from .matrix import DistCSRMatrix, ExchangePlan, balanced_partition, even_partition
from .pagerank import pagerank
from .solvers import bicgstab, block_cg, cg, gmres, jacobi, minres
from .vector import DistVector


def spmv(A: DistCSRMatrix, x: DistVector) -> DistVector:
    """``A @ x`` for a DistVector x (collective)."""
    return A.matvec(x)


def spmm(A: DistCSRMatrix, X: DistVector) -> DistVector:
    """``A @ X`` for an n x k DistVector block X: one ghost exchange of k-wide rows (collective)."""
    if X.local.ndim != 2:
        raise InputError(f"spmm needs an n x k block, got shape {X.shape}")
    return A.matvec(X)


def from_mtx(path, comm=None, partition=None, **kwargs) -> DistCSRMatrix:
    """:meth:`DistCSRMatrix.from_mtx`."""
    return DistCSRMatrix.from_mtx(path, comm, partition, **kwargs)


__all__ = ["DistCSRMatrix", "DistVector", "Communicator", "DistributedError", "ExchangePlan", "BACKENDS",
           "communicator", "balanced_partition", "even_partition", "from_mtx", "spmv", "spmm", "cg", "bicgstab",
           "gmres", "minres", "block_cg", "jacobi", "pagerank"]
