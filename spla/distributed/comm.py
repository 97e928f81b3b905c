"""Communicators: one interface over MPI (mpi4py) and NCCL (``cupy.cuda.nccl``).

The distributed matrix needs three things from a transport: a sum over ranks
of a few numbers (dot products, norms), a neighbour exchange of ghost
entries whose pattern is known in advance (started, then finished, so local
work can run in between), and the reverse exchange for ``A^T x``. Set-up
(partitions, plans, error agreement) always uses the MPI communicator's
object collectives on the host; only the per-iteration traffic changes
with the backend:

``mpi``
    NumPy data, ``Isend``/``Irecv`` of host buffers, ``Allreduce`` of
    host scalars.
``mpi-cuda``
    CuPy data handed to a CUDA-aware MPI (device pointers through
    ``__cuda_array_interface__``).
``mpi-staged``
    CuPy data copied to the host for every exchange (any MPI; also several
    ranks sharing one GPU).
``nccl``
    CuPy data, ``ncclSend``/``ncclRecv`` in one group and ``ncclAllReduce``
    on the current stream; one rank per GPU, bootstrapped through MPI.

:func:`communicator` picks one from where the data lives, or takes a name.
"""

from __future__ import annotations

import os

import numpy as np

from ..device import gpu_available, is_cupy_array
from ..errors import InputError, SplaError

BACKENDS = ("mpi", "mpi-cuda", "mpi-staged", "nccl")


class DistributedError(SplaError, RuntimeError):
    """A failure on one or more ranks, raised on every rank with the same message."""


def import_mpi():
    """mpi4py's MPI module, or an InputError naming the extra to install."""
    try:
        from mpi4py import MPI
    except ImportError as exc:
        raise InputError("spla.distributed needs mpi4py and an MPI library: pip install 'spla[distributed]' "
                         f"({exc})") from None
    return MPI


def world():
    """``MPI.COMM_WORLD``."""
    return import_mpi().COMM_WORLD


class Communicator:
    """A rank's view of the job: MPI for set-up plus one backend for the hot traffic.

    Parameters
    ----------
    mpi_comm : mpi4py.MPI.Comm, optional
        Default ``MPI.COMM_WORLD``.
    backend : {"mpi", "mpi-cuda", "mpi-staged", "nccl"}
    """

    def __init__(self, mpi_comm=None, backend: str = "mpi"):
        if backend not in BACKENDS:
            raise InputError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
        self.mpi = world() if mpi_comm is None else mpi_comm
        self.rank = self.mpi.Get_rank()
        self.size = self.mpi.Get_size()
        self.backend = backend
        self._sum = import_mpi().SUM
        self._nccl = None
        self._stream = None  # NCCL's own stream, so exchanges overlap the local products
        if backend == "nccl":
            self._nccl = _nccl_communicator(self.mpi)

    @property
    def on_gpu(self) -> bool:
        return self.backend != "mpi"

    @property
    def xp(self):
        if self.on_gpu:
            import cupy

            return cupy
        return np

    def __repr__(self) -> str:
        return f"Communicator(rank={self.rank}, size={self.size}, backend={self.backend!r})"

    # ---- set-up collectives (host objects) --------------------------------------------------
    def allgather(self, obj):
        return self.mpi.allgather(obj)

    def bcast(self, obj, root: int = 0):
        return self.mpi.bcast(obj, root=root)

    def barrier(self) -> None:
        self.mpi.Barrier()

    def agree(self, error: BaseException | None, what: str) -> None:
        """Raise the same DistributedError on every rank if any rank passes an error.

        Every rank must call this at the same point; it is the only way a
        failure on one rank reaches the others without a hang, so set-up
        code runs its local work, then calls ``agree``, then communicates.
        """
        message = None if error is None else f"{type(error).__name__}: {error}"
        messages = self.mpi.allgather(message)
        failed = [(rank, m) for rank, m in enumerate(messages) if m is not None]
        if not failed:
            return
        rank, first = failed[0]
        others = f" (and {len(failed) - 1} more rank{'s' if len(failed) > 2 else ''})" if len(failed) > 1 else ""
        exc = DistributedError(f"{what} failed on rank {rank}{others}: {first}")
        exc.exit_code = max(getattr(error, "exit_code", 1), 1) if error is not None else 1
        raise exc from error

    # ---- hot path ---------------------------------------------------------------------------
    def allreduce_sum(self, values):
        """Sum over ranks of a small float64 vector (host or device); returns a host numpy array.

        Reads the device (a synchronisation): for results the host needs now. The solvers'
        per-iteration sums go through :meth:`allreduce_sum_inplace` instead.
        """
        if self.size == 1:
            return np.array(values.get() if is_cupy_array(values) else values, dtype=np.float64, ndmin=1)
        if self._nccl is not None:
            buf = self.xp.array(values, dtype=np.float64, ndmin=1)
            self.allreduce_sum_inplace(buf)
            return buf.get()
        host = np.ascontiguousarray(values.get() if is_cupy_array(values) else values, dtype=np.float64)
        out = np.empty_like(host)
        self.mpi.Allreduce(host, out, op=self._sum)
        return out

    def allreduce_sum_inplace(self, buf) -> None:
        """Sum a small contiguous array over ranks, in place, where it lives; nothing at all on one rank.

        NCCL sums device buffers on the current stream (queued, no host wait),
        so a solver's scalars stay on the GPU between its convergence checks;
        NumPy buffers go through MPI. CuPy data under MPI costs a stream
        synchronisation (CUDA-aware) or a round trip through the host (staged).
        """
        if self.size == 1:
            return
        if self._nccl is not None:
            from cupy.cuda import nccl

            stream = self.xp.cuda.get_current_stream()
            self._nccl.allReduce(buf.data.ptr, buf.data.ptr, buf.size, _nccl_type(buf.dtype), nccl.NCCL_SUM,
                                 stream.ptr)
            return
        in_place = _mpi().IN_PLACE
        if self.backend == "mpi":
            self.mpi.Allreduce(in_place, buf, op=self._sum)
        elif self.backend == "mpi-cuda":
            self.xp.cuda.get_current_stream().synchronize()  # MPI reads device memory outside CUDA's stream order
            self.mpi.Allreduce(in_place, buf, op=self._sum)
        else:
            host = buf.get()
            self.mpi.Allreduce(in_place, host, op=self._sum)
            buf.set(host)

    def allreduce_array(self, array, op: str = "sum"):
        """Element-wise sum/max over ranks of a host numpy array (set-up and reports)."""
        MPI = _mpi()
        out = np.empty_like(array)
        self.mpi.Allreduce(np.ascontiguousarray(array), out, op={"sum": MPI.SUM, "max": MPI.MAX}[op])
        return out

    def start_exchange(self, sends, recvs):
        """Start sending ``sends[i] = (rank, buffer)`` and receiving into ``recvs[i] = (rank, buffer)``.

        Returns a handle whose ``wait()`` finishes the exchange (the receive
        buffers then hold the data). Buffers are contiguous and on the data's
        side; the staged backend copies them through the host.
        """
        if self._nccl is not None:
            if self._stream is None:
                import cupy

                self._stream = cupy.cuda.Stream(non_blocking=True)
            return _NcclExchange(self._nccl, self._stream, sends, recvs)
        if self.backend == "mpi-staged":
            return _StagedExchange(self.mpi, sends, recvs)
        if self.backend == "mpi-cuda" and (sends or recvs):
            import cupy

            cupy.cuda.get_current_stream().synchronize()  # MPI reads device memory outside CUDA's stream order
        return _MpiExchange(self.mpi, sends, recvs)


class _MpiExchange:
    def __init__(self, mpi, sends, recvs):
        self.requests = [mpi.Irecv(buf, source=rank, tag=71) for rank, buf in recvs]
        self.requests += [mpi.Isend(buf, dest=rank, tag=71) for rank, buf in sends]

    def wait(self) -> None:
        if self.requests:
            _mpi().Request.Waitall(self.requests)


class _StagedExchange:
    def __init__(self, mpi, sends, recvs):
        import cupy

        self.host_recvs = [(buf, np.empty(buf.shape, dtype=buf.dtype)) for _, buf in recvs]
        host_sends = [(rank, cupy.asnumpy(buf)) for rank, buf in sends]
        host_recvs = [(rank, host) for (rank, _), (_, host) in zip(recvs, self.host_recvs)]
        self.inner = _MpiExchange(mpi, host_sends, host_recvs)

    def wait(self) -> None:
        self.inner.wait()
        for device, host in self.host_recvs:
            device.set(host)


class _NcclExchange:
    """Sends and receives on a side stream that starts after the packing kernel (an event) and that the
    compute stream waits for in ``wait()``, so the diagonal block's product runs while ghosts travel."""

    def __init__(self, nccl_comm, stream, sends, recvs):
        import cupy
        from cupy.cuda import nccl

        self.buffers = (sends, recvs)  # keep the memory alive until the compute stream has waited
        self.done = None
        if not sends and not recvs:
            return
        stream.wait_event(cupy.cuda.get_current_stream().record())
        nccl.groupStart()
        for rank, buf in sends:
            nccl_comm.send(buf.data.ptr, buf.size, _nccl_type(buf.dtype), rank, stream.ptr)
        for rank, buf in recvs:
            nccl_comm.recv(buf.data.ptr, buf.size, _nccl_type(buf.dtype), rank, stream.ptr)
        nccl.groupEnd()
        self.done = stream.record()

    def wait(self) -> None:
        if self.done is not None:
            import cupy

            cupy.cuda.get_current_stream().wait_event(self.done)


def _mpi():
    return import_mpi()


def _nccl_type(dtype):
    from cupy.cuda import nccl

    return {np.dtype(np.float64): nccl.NCCL_FLOAT64, np.dtype(np.float32): nccl.NCCL_FLOAT32}[np.dtype(dtype)]


def _nccl_communicator(mpi_comm):
    """An NCCL communicator over the MPI ranks (unique id broadcast from rank 0), one GPU per rank."""
    try:
        from cupy.cuda import nccl
    except ImportError as exc:
        raise InputError(f"the nccl backend needs CuPy with NCCL (cupy.cuda.nccl): {exc}") from None
    uid = nccl.get_unique_id() if mpi_comm.Get_rank() == 0 else None
    uid = mpi_comm.bcast(uid, root=0)
    return nccl.NcclCommunicator(mpi_comm.Get_size(), uid, mpi_comm.Get_rank())


def _cuda_aware_mpi() -> bool:
    """True when the MPI library says it reads device memory (MPIX_Query_cuda_support), or the user says so."""
    forced = os.environ.get("SPLA_CUDA_AWARE_MPI")
    if forced is not None:
        return forced not in ("", "0")
    query = getattr(_mpi(), "Query_cuda_support", None)
    try:
        return bool(query()) if query is not None else False
    except NotImplementedError:
        return False


def select_gpu(mpi_comm) -> int:
    """Make this rank's current CUDA device its node-local rank modulo the GPU count; returns it."""
    import cupy

    MPI = _mpi()
    local = mpi_comm.Split_type(MPI.COMM_TYPE_SHARED)
    count = cupy.cuda.runtime.getDeviceCount()
    device = local.Get_rank() % count
    local.Free()
    cupy.cuda.Device(device).use()
    return device


def choose_backend(mpi_comm, on_gpu: bool) -> str:
    """The backend for data on the host (``mpi``) or on the GPU: nccl when every rank has its own GPU
    and NCCL imports, else CUDA-aware MPI when the library reports it, else host staging."""
    if not on_gpu:
        return "mpi"
    import cupy

    device = cupy.cuda.Device().id
    here = (_mpi().Get_processor_name(), device)
    devices = mpi_comm.allgather(here)
    shared_gpu = len(set(devices)) < len(devices)  # NCCL refuses two ranks on one GPU
    try:
        from cupy.cuda import nccl  # noqa: F401

        has_nccl = True
    except ImportError:
        has_nccl = False
    has_nccl = bool(mpi_comm.allreduce(int(has_nccl), op=_mpi().MIN))
    if has_nccl and not shared_gpu:
        return "nccl"
    return "mpi-cuda" if _cuda_aware_mpi() else "mpi-staged"


def communicator(comm=None, *, backend: str = "auto", device: str = "cpu") -> Communicator:
    """A :class:`Communicator` from an mpi4py communicator, an existing Communicator or None (COMM_WORLD).

    Parameters
    ----------
    comm : mpi4py.MPI.Comm, Communicator or None
    backend : {"auto", "mpi", "mpi-cuda", "mpi-staged", "nccl"}
        "auto": ``mpi`` for ``device="cpu"``, otherwise :func:`choose_backend`.
        The environment variable ``SPLA_DIST_BACKEND`` overrides "auto".
    device : {"cpu", "gpu"}
        Where the distributed data lives.
    """
    if isinstance(comm, Communicator):
        return comm
    if device not in ("cpu", "gpu"):
        raise InputError(f"device must be 'cpu' or 'gpu', got {device!r}")
    mpi_comm = world() if comm is None else comm
    if backend == "auto":
        backend = os.environ.get("SPLA_DIST_BACKEND", "auto")
    if backend == "auto":
        if device == "gpu" and not gpu_available():
            raise InputError("device='gpu' but no GPU is visible (CuPy missing or no CUDA device)")
        backend = choose_backend(mpi_comm, device == "gpu")
    return Communicator(mpi_comm, backend)
