"""``DistCSRMatrix``: a CSR matrix split into contiguous row blocks, one per rank.

Each rank keeps its rows in two CSR blocks, as PETSc's MPIAIJ and hypre's
ParCSR do:

- the *diagonal* block: the entries whose column this rank also owns (its
  slice of x), with columns renumbered from 0;
- the *off-diagonal* block: every other entry, with its columns compressed
  to the sorted list of distinct "ghost" columns this rank needs.

The ghost-exchange plan is built once: each rank tells every owner which of
its x entries it needs (``Alltoallv`` of global indices), so an SpMV sends
exactly the ghost entries, packed by one gather, to the ranks that read them.
``y = A x`` posts the receives and sends, multiplies the diagonal block
while the ghosts travel, then adds the off-diagonal block's product. Local
products run spla's own: on CuPy data each block's :func:`spla.spmv`
launcher is bound once (:class:`LocalProduct`), so with no ghost traffic (one
rank) ``A @ x`` costs what ``spla.spmv`` costs; blocks go through
:func:`spla.spmm`.

Rows are split in contiguous blocks balanced by ``nnz + rows`` unless the
caller passes a partition. For a square matrix x is split like y; for a
rectangular one x is split evenly (or by ``col_partition``).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from .. import spmm, spmv
from ..csr import CSRMatrix, as_csr, value_dtype
from ..errors import InputError
from .comm import Communicator, communicator
from .vector import DistVector


def balanced_partition(indptr, parts: int) -> np.ndarray:
    """Row offsets (length ``parts + 1``) splitting rows into contiguous blocks of about equal ``nnz + rows``.

    Counting a row as one unit of work besides its entries keeps blocks of
    empty rows from piling onto one rank.
    """
    indptr = np.asarray(indptr, dtype=np.int64)
    n = indptr.size - 1
    work = indptr + np.arange(n + 1, dtype=np.int64)  # cumulative nnz + rows at each row boundary
    targets = (np.arange(parts + 1, dtype=np.float64) * float(work[-1])) / parts
    offsets = np.searchsorted(work, targets, side="left").astype(np.int64)
    offsets[0], offsets[-1] = 0, n
    return offsets


def even_partition(n: int, parts: int) -> np.ndarray:
    """Row offsets splitting n rows into blocks whose sizes differ by at most one."""
    return (np.arange(parts + 1, dtype=np.int64) * n) // parts


def normalize_partition(partition, n: int, parts: int, what: str = "partition") -> np.ndarray:
    """Offsets from a user partition: ``parts + 1`` offsets (0 ... n) or ``parts`` block sizes."""
    p = np.asarray(partition, dtype=np.int64).ravel()
    if p.size == parts:  # block sizes
        p = np.concatenate(([0], np.cumsum(p)))
    if p.size != parts + 1:
        raise InputError(f"{what} must hold {parts} block sizes or {parts + 1} offsets, got {p.size} numbers")
    if p[0] != 0 or p[-1] != n or (np.diff(p) < 0).any():
        raise InputError(f"{what} must rise from 0 to {n} (the number of rows), got {p.tolist()}")
    return p


class ExchangePlan:
    """Which x entries go where in a ghost exchange; built once per matrix.

    ``send_ranks[i]`` receives ``x_local[send_index[send_starts[i]:send_starts[i+1]]]``;
    ghosts from ``recv_ranks[i]`` land in ``ghosts[recv_starts[i]:recv_starts[i+1]]``.
    """

    def __init__(self, send_ranks, send_starts, send_index, recv_ranks, recv_starts):
        self.send_ranks = [int(r) for r in send_ranks]
        self.send_starts = [int(s) for s in send_starts]
        self.send_index = send_index
        self.recv_ranks = [int(r) for r in recv_ranks]
        self.recv_starts = [int(s) for s in recv_starts]

    @property
    def send_count(self) -> int:
        return self.send_starts[-1] if self.send_starts else 0

    @property
    def recv_count(self) -> int:
        return self.recv_starts[-1] if self.recv_starts else 0

    def to(self, xp) -> ExchangePlan:
        return ExchangePlan(self.send_ranks, self.send_starts, xp.asarray(self.send_index), self.recv_ranks,
                            self.recv_starts)


def _split_columns(local, c0: int, c1: int):
    """(diagonal block, off-diagonal block, sorted ghost columns) of a host scipy CSR row block."""
    import scipy.sparse as sp

    n_local = local.shape[0]
    indices = local.indices.astype(np.int64, copy=False)
    rows = np.repeat(np.arange(n_local, dtype=np.int64), np.diff(local.indptr))
    own = (indices >= c0) & (indices < c1)

    def block(mask, cols, width):
        counts = np.bincount(rows[mask], minlength=n_local)
        indptr = np.concatenate(([0], np.cumsum(counts)))
        return sp.csr_matrix((local.data[mask], cols, indptr), shape=(n_local, width))

    ghost_of_entry = indices[~own]
    ghosts = np.unique(ghost_of_entry)
    diag = block(own, indices[own] - c0, c1 - c0)
    off = block(~own, np.searchsorted(ghosts, ghost_of_entry), ghosts.size)
    return diag, off, ghosts


class DistCSRMatrix:
    """A row-distributed sparse matrix (see the module notes); build it with a ``from_*`` constructor.

    Attributes
    ----------
    shape : (int, int)
        The global shape.
    row_offsets, col_offsets : numpy.ndarray of int64, length ``comm.size + 1``
        Rank r owns rows ``row_offsets[r]:row_offsets[r+1]`` (and y's
        entries there) and x's entries ``col_offsets[r]:col_offsets[r+1]``.
    diag, offdiag : CSRMatrix
        This rank's diagonal block and off-diagonal block (columns = ghosts).
    ghost_cols : numpy.ndarray of int64
        Global column of each off-diagonal column.
    plan : ExchangePlan
    comm : Communicator
    """

    def __init__(self, comm: Communicator, shape, row_offsets, col_offsets, diag, offdiag, ghost_cols,
                 plan: ExchangePlan):
        self.comm = comm
        self.shape = tuple(int(s) for s in shape)
        self.row_offsets = row_offsets
        self.col_offsets = col_offsets
        self.ghost_cols = ghost_cols
        xp = comm.xp
        self.diag = diag.to_device() if comm.on_gpu else diag
        self.offdiag = offdiag.to_device() if comm.on_gpu else offdiag
        self.plan = plan.to(xp) if comm.on_gpu else plan
        self._transposes: tuple | None = None
        self._product: LocalProduct | None = None
        self._converted: dict = {}

    # ---- description ------------------------------------------------------------------------
    @property
    def dtype(self):
        return self.diag.dtype

    @property
    def xp(self):
        return self.comm.xp

    @property
    def n_local_rows(self) -> int:
        return self.diag.n_rows

    @property
    def n_local_cols(self) -> int:
        return self.diag.n_cols

    @property
    def local_nnz(self) -> int:
        return self.diag.nnz + self.offdiag.nnz

    @property
    def nnz(self) -> int:
        return int(self.comm.allreduce_array(np.array([self.local_nnz], dtype=np.int64))[0])

    def __repr__(self) -> str:
        return (f"DistCSRMatrix(shape={self.shape}, dtype={self.dtype}, rank={self.comm.rank}/{self.comm.size}, "
                f"local rows={self.n_local_rows}, local nnz={self.local_nnz}, ghosts={self.ghost_cols.size}, "
                f"backend={self.comm.backend!r})")

    def stats(self) -> dict:
        """This rank's figures: rows, nnz (diagonal/off-diagonal), ghosts received, entries sent, neighbours."""
        return {"rank": self.comm.rank, "rows": self.n_local_rows, "nnz": self.local_nnz,
                "diag_nnz": self.diag.nnz, "offdiag_nnz": self.offdiag.nnz, "ghosts": int(self.ghost_cols.size),
                "sent": self.plan.send_count, "neighbours": len(set(self.plan.send_ranks) | set(self.plan.recv_ranks))}

    # ---- constructors -----------------------------------------------------------------------
    @classmethod
    def from_global(cls, A, comm=None, partition=None, *, col_partition=None, dtype=None, device: str | None = None,
                    backend: str = "auto") -> DistCSRMatrix:
        """Scatter a matrix held by rank 0 (A is ignored elsewhere: pass None).

        Parameters
        ----------
        A : CSRMatrix, scipy.sparse matrix or dense array on rank 0; None on the others.
        comm : mpi4py.MPI.Comm or Communicator, optional
            Default ``MPI.COMM_WORLD``.
        partition : sequence of int, optional
            Row split, read on rank 0: ``size + 1`` offsets or ``size`` block
            sizes. Default: blocks balanced by ``nnz + rows``.
        col_partition : sequence of int, optional
            Split of x for a rectangular A (default even); a square A splits
            x like its rows.
        dtype : float32 or float64, optional
        device : {"cpu", "gpu"}, optional (default: the side of a given Communicator, else "cpu")
            Where the local blocks and vectors live (GPU: one device per rank,
            picked by node-local rank).
        backend : {"auto", "mpi", "mpi-cuda", "mpi-staged", "nccl"}

        Returns
        -------
        DistCSRMatrix
        """
        comm = _make_comm(comm, backend, device)
        meta: Any = None
        host: Any = None
        error = None
        if comm.rank == 0:
            try:
                host = as_csr(A, dtype=dtype).to_host().to_scipy()
                rows = normalize_partition(partition, host.shape[0], comm.size) if partition is not None \
                    else balanced_partition(host.indptr, comm.size)
                meta = (host.shape, host.dtype.str, rows, _col_offsets(host.shape, rows, comm.size, col_partition))
            except Exception as exc:  # noqa: BLE001 -- every rank must hear of it, see Communicator.agree
                error = exc
        comm.agree(error, "DistCSRMatrix.from_global: rank 0's matrix or partition")
        shape, dtype_str, row_offsets, col_offsets = comm.bcast(meta)
        lo, hi = row_offsets[comm.rank], row_offsets[comm.rank + 1]
        row_lengths = np.empty(hi - lo, dtype=np.int64)
        lengths_all: Any = None
        counts: Any = None
        send_idx: Any = None
        send_val: Any = None
        if comm.rank == 0:
            lengths_all = np.diff(host.indptr).astype(np.int64)
            counts = (host.indptr[row_offsets[1:]] - host.indptr[row_offsets[:-1]]).astype(np.int64)
        comm.mpi.Scatterv([lengths_all, (np.diff(row_offsets).tolist(), row_offsets[:-1].tolist())]
                          if comm.rank == 0 else None, row_lengths, root=0)
        nnz_local = int(row_lengths.sum())
        indices = np.empty(nnz_local, dtype=np.int64)
        data = np.empty(nnz_local, dtype=np.dtype(dtype_str))
        if comm.rank == 0:
            displs = np.concatenate((np.zeros(1, np.int64), np.cumsum(counts)[:-1])).tolist()
            send_idx = [host.indices.astype(np.int64), (counts.tolist(), displs)]
            send_val = [np.ascontiguousarray(host.data), (counts.tolist(), displs)]
        comm.mpi.Scatterv(send_idx, indices, root=0)
        comm.mpi.Scatterv(send_val, data, root=0)
        import scipy.sparse as sp

        indptr = np.concatenate(([0], np.cumsum(row_lengths)))
        local = sp.csr_matrix((data, indices, indptr), shape=(hi - lo, shape[1]))
        return cls._assemble(comm, local, shape, row_offsets, col_offsets)

    @classmethod
    def from_row_blocks(cls, local, comm=None, *, n_cols=None, col_partition=None, dtype=None,
                        device: str | None = None, backend: str = "auto") -> DistCSRMatrix:
        """Build from each rank's block of consecutive rows (rank 0 the first rows, and so on).

        Parameters
        ----------
        local : CSRMatrix, scipy.sparse matrix or dense array, shape (n_local, n_cols)
            Global column indices. A rank may hold 0 rows.
        comm, col_partition, dtype, device, backend
            As in :meth:`from_global`.
        n_cols : int, optional
            Checked against every rank's block width.

        Raises
        ------
        DistributedError
            On every rank, when any rank's block is bad or the widths or dtypes differ.
        """
        comm = _make_comm(comm, backend, device)
        error, mine = None, None
        try:
            block = as_csr(local, dtype=dtype).to_host().to_scipy()
            mine = (block.shape[0], block.shape[1], block.dtype.str)
        except Exception as exc:  # noqa: BLE001 -- agreed below
            error = exc
        comm.agree(error, "DistCSRMatrix.from_row_blocks: a rank's row block")
        blocks = comm.allgather(mine)
        widths = {b[1] for b in blocks}
        dtypes = {b[2] for b in blocks}
        problem = None
        if len(widths) != 1 or (n_cols is not None and widths != {int(n_cols)}):
            problem = InputError("row blocks differ in width: " + ", ".join(f"rank {r}: {b[1]}"
                                                                            for r, b in enumerate(blocks))
                                 + (f" (n_cols={n_cols})" if n_cols is not None else ""))
        elif len(dtypes) != 1:
            dtype_all = np.result_type(*[np.dtype(d) for d in dtypes])
            block = block.astype(value_dtype(dtype_all))
        comm.agree(problem if comm.rank == 0 else None, "DistCSRMatrix.from_row_blocks: set-up")
        rows = np.concatenate(([0], np.cumsum([b[0] for b in blocks]))).astype(np.int64)
        shape = (int(rows[-1]), int(widths.pop()))
        try:
            col_offsets = _col_offsets(shape, rows, comm.size, col_partition)
        except InputError as exc:
            error = exc
        comm.agree(error, "DistCSRMatrix.from_row_blocks: col_partition")
        return cls._assemble(comm, block, shape, rows, col_offsets)

    @classmethod
    def from_mtx(cls, path, comm=None, partition=None, **kwargs) -> DistCSRMatrix:
        """Read a Matrix Market file in parallel: each rank parses a byte range, then rows move to their owners.

        See :func:`spla.distributed.mtx.read_mtx_distributed` for what is read and the keywords.
        """
        from .mtx import read_mtx_distributed

        return read_mtx_distributed(path, comm=comm, partition=partition, **kwargs)

    @classmethod
    def _assemble(cls, comm: Communicator, local, shape, row_offsets, col_offsets) -> DistCSRMatrix:
        """Split a rank's rows into diagonal/off-diagonal blocks and build the exchange plan (collective)."""
        MPI = comm.mpi
        c0, c1 = int(col_offsets[comm.rank]), int(col_offsets[comm.rank + 1])
        error = None
        try:
            if local.nnz and (local.indices.min() < 0 or local.indices.max() >= shape[1]):
                raise InputError(f"a column index is outside 0..{shape[1] - 1}")
            if local.nnz and not np.isfinite(local.data).all():
                raise InputError("the matrix holds NaN or Inf")
            diag, off, ghosts = _split_columns(local, c0, c1)
            owners = np.searchsorted(col_offsets, ghosts, side="right") - 1
            recv_counts = np.bincount(owners, minlength=comm.size).astype(np.int64)
        except Exception as exc:  # noqa: BLE001 -- agreed below
            error = exc
        comm.agree(error, "DistCSRMatrix set-up")
        send_counts = np.empty(comm.size, dtype=np.int64)
        MPI.Alltoall(recv_counts, send_counts)
        requested = np.empty(int(send_counts.sum()), dtype=np.int64)
        recv_displs = np.concatenate(([0], np.cumsum(recv_counts)[:-1]))
        send_displs = np.concatenate(([0], np.cumsum(send_counts)[:-1]))
        MPI.Alltoallv([ghosts, (recv_counts.tolist(), recv_displs.tolist())],
                      [requested, (send_counts.tolist(), send_displs.tolist())])
        send_ranks = np.flatnonzero(send_counts)
        recv_ranks = np.flatnonzero(recv_counts)
        plan = ExchangePlan(send_ranks, np.concatenate(([0], np.cumsum(send_counts[send_ranks]))),
                            requested - c0, recv_ranks, np.concatenate(([0], np.cumsum(recv_counts[recv_ranks]))))
        return cls(comm, shape, row_offsets, col_offsets, CSRMatrix.from_scipy(diag), CSRMatrix.from_scipy(off),
                   ghosts, plan)

    # ---- vectors ----------------------------------------------------------------------------
    def _offsets(self, space: str):
        if space not in ("domain", "range"):
            raise InputError(f"space must be 'domain' (x, length n_cols) or 'range' (y, length n_rows), got {space!r}")
        return self.col_offsets if space == "domain" else self.row_offsets

    def distribute_vector(self, x=None, *, space: str = "domain") -> DistVector:
        """Scatter a vector (or n x k block) held by rank 0 (None elsewhere) in this matrix's layout.

        ``space="domain"`` splits it like x (length n_cols), ``"range"`` like y.
        The slices are cast to the matrix dtype and moved to the GPU with a GPU backend.
        """
        offsets = self._offsets(space)
        comm = self.comm
        meta, error = None, None
        if comm.rank == 0:
            try:
                x = np.ascontiguousarray(x.get() if hasattr(x, "get") else np.asarray(x), dtype=self.dtype)
                if x.ndim not in (1, 2) or x.shape[0] != offsets[-1]:
                    raise InputError(f"the vector must have {offsets[-1]} rows ({space} of a {self.shape[0]}x"
                                     f"{self.shape[1]} matrix), got shape {x.shape}")
                meta = x.shape[1:]
            except Exception as exc:  # noqa: BLE001 -- agreed below
                error = exc
        comm.agree(error, "distribute_vector: rank 0's vector")
        tail = comm.bcast(meta)
        width = int(np.prod(tail, dtype=np.int64))
        lo, hi = offsets[comm.rank], offsets[comm.rank + 1]
        local = np.empty((hi - lo, *tail), dtype=self.dtype)
        counts = (np.diff(offsets) * width).tolist()
        displs = (offsets[:-1] * width).tolist()
        comm.mpi.Scatterv([x, (counts, displs)] if comm.rank == 0 else None, local, root=0)
        return DistVector(self.xp.asarray(local), offsets, comm)

    def local_vector(self, local, *, space: str = "domain") -> DistVector:
        """Wrap this rank's slice (already in this matrix's layout) as a DistVector."""
        return DistVector(self.xp.asarray(local), self._offsets(space), self.comm)

    def zeros(self, k: int | None = None, *, space: str = "domain") -> DistVector:
        offsets = self._offsets(space)
        n = int(offsets[self.comm.rank + 1] - offsets[self.comm.rank])
        return DistVector(self.xp.zeros((n,) if k is None else (n, k), dtype=self.dtype), offsets, self.comm)

    def gather(self, v: DistVector, root: int = 0):
        """The whole of v as a NumPy array on ``root``, None elsewhere (see :meth:`DistVector.gather`)."""
        return v.gather(root)

    # ---- products ---------------------------------------------------------------------------
    def start_ghost_exchange(self, x_local):
        """Post the ghost receives and sends for ``x_local`` (n_local or n_local x k); returns (ghosts, handle)."""
        xp = self.xp
        plan = self.plan
        ghosts = xp.empty((plan.recv_count, *x_local.shape[1:]), dtype=self.dtype)
        packed = x_local[plan.send_index] if plan.send_count else ghosts[:0]
        sends = [(rank, packed[plan.send_starts[i]:plan.send_starts[i + 1]])
                 for i, rank in enumerate(plan.send_ranks)]
        recvs = [(rank, ghosts[plan.recv_starts[i]:plan.recv_starts[i + 1]])
                 for i, rank in enumerate(plan.recv_ranks)]
        return ghosts, self.comm.start_exchange(sends, recvs)

    def _multiply(self, block: CSRMatrix, x, out=None):
        """``block @ x`` (+ out) through spla's own products, skipping empty blocks."""
        xp = self.xp
        if out is None and (block.nnz == 0 or block.n_cols == 0):
            return xp.zeros((block.n_rows, *x.shape[1:]), dtype=self.dtype)
        if block.nnz == 0:
            return out
        if x.ndim == 2:
            return spmm(block, x) if out is None else spmm(block, x, out, beta=1.0)
        return spmv(block, x) if out is None else spmv(block, x, out, beta=1.0)

    def local_product(self) -> LocalProduct:
        """This rank's SpMV of 1-D slices with launchers and exchange buffers set up once (see
        :class:`LocalProduct`); what :meth:`matvec` and the solvers run."""
        if self._product is None:
            self._product = LocalProduct(self)
        return self._product

    def astype(self, dtype) -> DistCSRMatrix:
        """This matrix with values of ``dtype`` (self when they are; the copy is kept); not collective."""
        dtype = np.dtype(dtype)
        if dtype == self.dtype:
            return self
        converted = self._converted.get(dtype.str)
        if converted is None:
            converted = self._converted[dtype.str] = DistCSRMatrix(
                self.comm, self.shape, self.row_offsets, self.col_offsets, self.diag.astype(dtype),
                self.offdiag.astype(dtype), self.ghost_cols, self.plan)
        return converted

    def matvec_local(self, x_local):
        """This rank's slice of ``A @ x`` from its slice of x (collective: every rank must call it)."""
        x_local = self._check_local(x_local, self.n_local_cols)
        if x_local.ndim == 1:
            return self.local_product()(x_local)
        if not self.plan.send_ranks and not self.plan.recv_ranks:  # no ghosts in or out (e.g. one rank)
            return self._multiply(self.diag, x_local)
        ghosts, handle = self.start_ghost_exchange(x_local)
        y = self._multiply(self.diag, x_local)  # overlaps the ghost traffic
        handle.wait()
        return self._multiply(self.offdiag, ghosts, y)

    def _check_local(self, x_local, n):
        if x_local.shape[0] != n or x_local.ndim not in (1, 2):
            raise InputError(f"rank {self.comm.rank}: local slice must have {n} rows, got shape {x_local.shape}")
        if x_local.dtype != self.dtype:
            x_local = x_local.astype(self.dtype)
        return self.xp.ascontiguousarray(x_local)

    def matvec(self, x: DistVector) -> DistVector:
        """``A @ x`` for a DistVector in the domain layout; returns one in the range layout."""
        if not isinstance(x, DistVector):
            raise InputError(f"expected a DistVector (see distribute_vector), got {type(x).__name__}")
        if x.offsets is not self.col_offsets and not np.array_equal(x.offsets, self.col_offsets):
            raise InputError(f"x has shape {x.shape} split at {x.offsets.tolist()}; this {self.shape[0]}x"
                             f"{self.shape[1]} matrix needs x split at {self.col_offsets.tolist()}")
        product = self._product if self._product is not None else self.local_product()
        if product.fast is not None:  # the common GPU call with no ghosts: what spla.spmv(A, x) costs
            y = product.fast(x.local, 1, 0, None)
            if y is not None:
                return DistVector.wrap(y, self.row_offsets, self.comm)
        return DistVector.wrap(self.matvec_local(x.local), self.row_offsets, self.comm)

    __matmul__ = dot = matvec  # one call less on the hot path

    def rmatvec_local(self, z_local):
        """This rank's slice of ``A^T z`` (domain layout) from its slice of z (range layout); collective.

        The plan runs backwards: each rank multiplies its off-diagonal block's
        transpose, sends the ghost-column sums to their owners, and they add
        them in. Used by PageRank, whose iteration is ``A^T (D^-1 x)``.
        """
        xp = self.xp
        z_local = self._check_local(z_local, self.n_local_rows)
        if self._transposes is None:
            self._transposes = (self._host_transpose(self.diag), self._host_transpose(self.offdiag))
        diag_t, off_t = self._transposes
        plan = self.plan
        contributions = spmv(off_t, z_local) if off_t.nnz else xp.zeros(plan.recv_count, dtype=self.dtype)
        incoming = xp.empty(plan.send_count, dtype=self.dtype)
        sends = [(rank, contributions[plan.recv_starts[i]:plan.recv_starts[i + 1]])
                 for i, rank in enumerate(plan.recv_ranks)]
        recvs = [(rank, incoming[plan.send_starts[i]:plan.send_starts[i + 1]])
                 for i, rank in enumerate(plan.send_ranks)]
        handle = self.comm.start_exchange(sends, recvs)
        y = spmv(diag_t, z_local) if diag_t.nnz else xp.zeros(self.n_local_cols, dtype=self.dtype)
        handle.wait()
        if plan.send_count:
            _scatter_add(xp, y, plan.send_index, incoming)
        return y

    def _host_transpose(self, block: CSRMatrix) -> CSRMatrix:
        """block^T built by SciPy (empty blocks too, which cuSPARSE's csr2csc may refuse), on the data's side."""
        transposed = CSRMatrix.from_scipy(block.to_host().to_scipy().T.tocsr())
        return transposed.to_device() if self.comm.on_gpu else transposed

    def timed_matvec(self, x: DistVector, repeat: int = 10) -> dict:
        """Median seconds of this rank's parts of an SpMV: ``diag``, ``offdiag``, ``exchange`` (pack, send,
        wait with the others at a barrier) and ``total`` (one overlapped :meth:`matvec`); collective."""
        xp = self.xp
        sync = _synchronizer(xp)
        parts: dict = {"diag": [], "offdiag": [], "exchange": [], "total": []}
        for _ in range(repeat):
            self.comm.barrier()
            start = time.perf_counter()
            self.matvec_local(x.local)
            sync()
            parts["total"].append(time.perf_counter() - start)
            self.comm.barrier()
            start = time.perf_counter()
            ghosts, handle = self.start_ghost_exchange(x.local)
            handle.wait()
            sync()
            parts["exchange"].append(time.perf_counter() - start)
            start = time.perf_counter()
            y = self._multiply(self.diag, x.local)
            sync()
            parts["diag"].append(time.perf_counter() - start)
            start = time.perf_counter()
            self._multiply(self.offdiag, ghosts, y)
            sync()
            parts["offdiag"].append(time.perf_counter() - start)
        return {k: float(np.median(v)) for k, v in parts.items()}


class LocalProduct:
    """One rank's ``y = A_diag x + A_offdiag ghosts`` for 1-D slices, set up once per matrix.

    On the GPU each block's ``spla.spmv`` launcher is bound once, so a product
    costs its launches and nothing more; the packing and ghost buffers, and
    the send and receive lists over them, are allocated once too (reusing
    them is safe: each product waits for its exchange before it returns, in
    stream order for NCCL). With no ghost traffic in or out (one rank, a
    block-diagonal split) a product is the diagonal block's launch alone:
    :attr:`launcher` is that launcher and :attr:`fast` its checked hot path
    (both ``None`` otherwise).
    Calls take contiguous slices of the matrix dtype (``matvec_local`` checks).
    """

    def __init__(self, A: DistCSRMatrix):
        xp, plan = A.xp, A.plan
        self.xp, self.comm, self.dtype, self.n_rows = xp, A.comm, A.dtype, A.n_local_rows
        self.exchanges = bool(plan.send_ranks or plan.recv_ranks)
        self.on_gpu = A.comm.on_gpu
        self.one, self.zero = A.dtype.type(1), A.dtype.type(0)
        self.fast = self.launcher = None
        if self.on_gpu:
            self.diag = _launcher(A.diag)
            self.offdiag = _launcher(A.offdiag)
            if self.diag is not None and not self.exchanges:
                self.launcher = self.diag
                self.fast = self.diag.fast
        else:
            self.diag = A.diag.to_scipy()
            self.offdiag = A.offdiag.to_scipy() if A.offdiag.nnz else None
        if not self.exchanges:
            return
        self.send_index = plan.send_index if plan.send_count else None
        self.packed = xp.empty(plan.send_count, dtype=A.dtype)
        self.ghosts = xp.empty(plan.recv_count, dtype=A.dtype)
        self.sends = [(rank, self.packed[plan.send_starts[i]:plan.send_starts[i + 1]])
                      for i, rank in enumerate(plan.send_ranks)]
        self.recvs = [(rank, self.ghosts[plan.recv_starts[i]:plan.recv_starts[i + 1]])
                      for i, rank in enumerate(plan.recv_ranks)]

    def _start(self, x):
        if self.send_index is not None:
            self.xp.take(x, self.send_index, out=self.packed)
        return self.comm.start_exchange(self.sends, self.recvs)

    def __call__(self, x):
        """A new array holding this rank's slice of ``A x``."""
        if self.on_gpu:
            return self.into(x, self.xp.empty(self.n_rows, dtype=self.dtype))
        handle = self._start(x) if self.exchanges else None
        y = np.asarray(self.diag @ x, dtype=self.dtype)  # SciPy's product, overlapping the ghost traffic
        if handle is not None:
            handle.wait()
            if self.offdiag is not None:
                y += self.offdiag @ self.ghosts
        return y

    def into(self, x, out):
        """This rank's slice of ``A x`` written into ``out``; on the GPU nothing is allocated
        (what a captured CUDA graph needs)."""
        if not self.on_gpu:
            out[...] = self(x)
            return out
        handle = self._start(x) if self.exchanges else None
        if self.diag is None:
            out.fill(0)
        else:
            self.diag.launch(x, out, self.one, self.zero)
        if handle is not None:
            handle.wait()
            if self.offdiag is not None:
                self.offdiag.launch(self.ghosts, out, self.one, self.one)
        return out


def _launcher(block: CSRMatrix):
    """``spla.spmv``'s launcher of a device block for the ``auto`` kernel (bound now unless spla.spmv
    already has, and cached on the block as spla.spmv caches it), or None for a block with no entries."""
    if block.nnz == 0 or block.n_rows == 0 or block.n_cols == 0:
        return None
    from ..ops.spmv import launcher

    return launcher(block)


def _scatter_add(xp, y, index, values) -> None:
    if xp is np:
        np.add.at(y, index, values)
    else:
        import cupyx

        cupyx.scatter_add(y, index, values)


def _synchronizer(xp):
    if xp is np:
        return lambda: None
    return lambda: xp.cuda.get_current_stream().synchronize()


def _col_offsets(shape, row_offsets, parts: int, col_partition) -> np.ndarray:
    if col_partition is not None:
        return normalize_partition(col_partition, shape[1], parts, "col_partition")
    if shape[0] == shape[1]:
        return np.asarray(row_offsets, dtype=np.int64)
    return even_partition(shape[1], parts)


def _make_comm(comm, backend: str, device: str | None) -> Communicator:
    """The communicator for a new matrix; ``device=None`` takes the side of a given
    Communicator (its backend decides), else the host."""
    if device is None:
        device = ("gpu" if comm.on_gpu else "cpu") if isinstance(comm, Communicator) else "cpu"
    if not isinstance(comm, Communicator) and device == "gpu":
        from .comm import select_gpu, world

        select_gpu(world() if comm is None else comm)
    made = communicator(comm, backend=backend, device=device)
    if (device == "gpu") != made.on_gpu:
        raise InputError(f"device={device!r} does not match the communicator's backend {made.backend!r}")
    return made
