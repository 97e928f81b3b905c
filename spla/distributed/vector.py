"""``DistVector``: one rank's contiguous slice of a vector (or of an n x k block)."""

from __future__ import annotations

import math

import numpy as np

from ..device import is_cupy_array
from ..errors import InputError
from .comm import Communicator


class DistVector:
    """A vector split into contiguous slices, one per rank; ``local`` is this rank's (NumPy or CuPy).

    Reductions (:meth:`dot`, :meth:`norm`, :meth:`sum`) are global: every
    rank gets the same float through one ``Allreduce``. Element-wise
    arithmetic is local and needs both operands in the same layout.

    Parameters
    ----------
    local : 1-D array (n_local,) or 2-D array (n_local, k)
    offsets : sequence of int, length ``comm.size + 1``
        Rank r owns global rows ``offsets[r]:offsets[r + 1]``.
    comm : Communicator
    """

    __array_priority__ = 100  # numpy scalars defer to our __rmul__

    def __init__(self, local, offsets, comm: Communicator):
        self.local = local
        # keep the matrix's own array when it already is int64: np.asarray would return a new view
        # of a bcast-unpickled '<i8' array, and DistCSRMatrix.matvec's identity test would then pay
        # an array_equal on every product
        self.offsets = offsets if isinstance(offsets, np.ndarray) and offsets.dtype == np.int64 \
            else np.asarray(offsets, dtype=np.int64)
        self.comm = comm
        expected = int(self.offsets[comm.rank + 1] - self.offsets[comm.rank])
        if local.shape[0] != expected:
            raise InputError(f"rank {comm.rank} owns {expected} rows of this vector but its slice has {local.shape[0]}")

    @classmethod
    def wrap(cls, local, offsets, comm: Communicator) -> DistVector:
        """A DistVector over ``local`` without the checks of the constructor: for slices a
        :class:`DistCSRMatrix` has just produced in ``offsets``' layout (an int64 array, kept as is)."""
        vector = cls.__new__(cls)
        vector.local, vector.offsets, vector.comm = local, offsets, comm
        return vector

    # ---- shape ------------------------------------------------------------------------------
    @property
    def shape(self) -> tuple:
        return (int(self.offsets[-1]),) + tuple(self.local.shape[1:])

    @property
    def dtype(self):
        return self.local.dtype

    @property
    def xp(self):
        return self.comm.xp if is_cupy_array(self.local) else np

    def __repr__(self) -> str:
        return f"DistVector(shape={self.shape}, dtype={self.dtype}, rank={self.comm.rank}/{self.comm.size})"

    def _like(self, local) -> DistVector:
        return DistVector(local, self.offsets, self.comm)

    def _check(self, other: DistVector) -> None:
        if not isinstance(other, DistVector):
            raise InputError(f"expected a DistVector, got {type(other).__name__}")
        if other.shape != self.shape or not np.array_equal(other.offsets, self.offsets):
            raise InputError(f"DistVector layouts differ: {self.shape} split at {self.offsets.tolist()} and "
                             f"{other.shape} split at {other.offsets.tolist()}")

    # ---- reductions -------------------------------------------------------------------------
    def dot(self, other: DistVector) -> float:
        """Global ``sum(self * other)`` (all entries, also of a block)."""
        self._check(other)
        return float(self.comm.allreduce_sum(self.xp.vdot(self.local, other.local).reshape(1))[0])

    def norm(self) -> float:
        """Global Euclidean (Frobenius for a block) norm."""
        return math.sqrt(max(self.dot(self), 0.0))

    def sum(self) -> float:
        return float(self.comm.allreduce_sum(self.local.sum().reshape(1))[0])

    def column_dots(self, other: DistVector):
        """Per-column global dot products of two n x k blocks (a host float64 array of k)."""
        self._check(other)
        return self.comm.allreduce_sum((self.local * other.local).sum(axis=0))

    # ---- arithmetic -------------------------------------------------------------------------
    def axpy(self, alpha: float, x: DistVector) -> DistVector:
        """``self += alpha * x`` in place; returns self."""
        self._check(x)
        self.local += self.local.dtype.type(alpha) * x.local
        return self

    def copy(self) -> DistVector:
        return self._like(self.local.copy())

    def astype(self, dtype) -> DistVector:
        return self._like(self.local.astype(dtype))

    def zeros_like(self) -> DistVector:
        return self._like(self.xp.zeros_like(self.local))

    def _operand(self, other):
        if isinstance(other, DistVector):
            self._check(other)
            return other.local
        return other

    def __add__(self, other):
        return self._like(self.local + self._operand(other))

    def __sub__(self, other):
        return self._like(self.local - self._operand(other))

    def __mul__(self, other):
        return self._like(self.local * self._operand(other))

    __rmul__ = __mul__

    def __truediv__(self, other):
        return self._like(self.local / self._operand(other))

    def __neg__(self):
        return self._like(-self.local)

    def __iadd__(self, other):
        self.local += self._operand(other)
        return self

    def __isub__(self, other):
        self.local -= self._operand(other)
        return self

    def __imul__(self, other):
        self.local *= self._operand(other)
        return self

    # ---- movement ---------------------------------------------------------------------------
    def gather(self, root: int = 0):
        """The whole vector as a NumPy array on ``root``, None on the other ranks."""
        host = np.ascontiguousarray(self.local.get() if is_cupy_array(self.local) else self.local)
        width = int(np.prod(host.shape[1:], dtype=np.int64))
        counts = (np.diff(self.offsets) * width).tolist()
        displs = (self.offsets[:-1] * width).tolist()
        out = np.empty(self.shape, dtype=host.dtype) if self.comm.rank == root else None
        self.comm.mpi.Gatherv(host, [out, (counts, displs)] if out is not None else None, root=root)
        return out
