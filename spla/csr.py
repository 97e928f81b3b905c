"""``CSRMatrix``: spla's one sparse container, on the host or the GPU.

Arrays follow SciPy's CSR layout (``data``, ``indices``, ``indptr``). Values
are float32 or float64. Indices are int32 unless the matrix needs more: when
nnz or a dimension exceeds 2**31 - 1 they switch to int64 everywhere, so no
kernel or analysis can overflow a 32-bit offset.
"""

from __future__ import annotations

import numpy as np

from . import cuda
from .errors import InputError

INT32_MAX = 2**31 - 1
VALUE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def index_dtype_for(nnz: int, shape) -> np.dtype:
    """int32 when every offset and index fits, else int64."""
    if nnz > INT32_MAX or max(shape, default=0) > INT32_MAX:
        return np.dtype(np.int64)
    return np.dtype(np.int32)


def value_dtype(dtype) -> np.dtype:
    """Canonical value dtype: float32/float64 kept, other real types -> float64."""
    dtype = np.dtype(dtype)
    if dtype in VALUE_DTYPES:
        return dtype
    if dtype.kind == "c":
        raise InputError("complex matrices are not supported by spla")
    if dtype.kind in "biuf":
        return np.dtype(np.float64)
    raise InputError(f"unsupported value dtype {dtype}")


class CSRMatrix:
    """A compressed sparse row matrix whose arrays live in NumPy or CuPy.

    Parameters
    ----------
    data, indices, indptr : array_like
        SciPy's CSR arrays, all NumPy or all CuPy.
    shape : (int, int)
    dtype : float32 or float64, optional
        Value type; default keeps float32/float64 and turns other real types
        into float64.
    index_dtype : int32 or int64, optional
        Default is the narrowest that holds nnz and both dimensions; int64 may
        be forced (int32 is refused where it would overflow).
    validate : bool
        Check the CSR invariants (monotone indptr, indices in range).

    See Also
    --------
    scipy.sparse.csr_matrix, cupyx.scipy.sparse.csr_matrix
    """

    # NumPy operators return NotImplemented instead of treating A as an object array.
    __array_ufunc__ = None

    def __init__(self, data, indices, indptr, shape, *, dtype=None, index_dtype=None, validate=True):
        xp = cuda.array_module(data, indices, indptr)
        shape = tuple(int(s) for s in shape)
        if len(shape) != 2 or min(shape) < 0:
            raise InputError(f"shape must be two non-negative integers, got {shape}")
        data = xp.asarray(data).ravel()
        indices = xp.asarray(indices).ravel()
        indptr = xp.asarray(indptr).ravel()
        nnz = int(data.shape[0])
        needed = index_dtype_for(max(nnz, int(indices.shape[0])), shape)
        idx = needed if index_dtype is None else np.dtype(index_dtype)
        if idx not in (np.dtype(np.int32), np.dtype(np.int64)):
            raise InputError(f"index dtype must be int32 or int64, got {idx}")
        if idx.itemsize < needed.itemsize:
            raise InputError(f"this matrix needs int64 indices (nnz={nnz}, shape={shape})")
        self.shape = shape
        self.data = data.astype(value_dtype(data.dtype if dtype is None else dtype), copy=False)
        self.indices = indices.astype(idx, copy=False)
        self.indptr = indptr.astype(idx, copy=False)
        self._cache: dict = {}  # plans, transposes, device copies: derived data keyed by purpose
        if validate:
            self.validate()

    # ------------------------------------------------------------------ info
    @property
    def nnz(self) -> int:
        return int(self.data.shape[0])

    @property
    def n_rows(self) -> int:
        return self.shape[0]

    @property
    def n_cols(self) -> int:
        return self.shape[1]

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self.data.dtype)

    @property
    def index_dtype(self) -> np.dtype:
        return np.dtype(self.indices.dtype)

    @property
    def on_gpu(self) -> bool:
        return cuda.is_cupy_array(self.data)

    @property
    def device(self) -> str:
        return "gpu" if self.on_gpu else "cpu"

    @property
    def xp(self):
        return cuda.array_module(self.data)

    @property
    def nbytes(self) -> int:
        return int(self.data.nbytes + self.indices.nbytes + self.indptr.nbytes)

    def row_lengths(self):
        """nnz per row, as an int64 array on the matrix's side."""
        return self.xp.diff(self.indptr).astype(np.int64)

    def __repr__(self) -> str:
        return (f"<spla.CSRMatrix {self.n_rows}x{self.n_cols}, nnz={self.nnz}, "
                f"{self.dtype.name}/{self.index_dtype.name}, on {self.device}>")

    # ------------------------------------------------------------ invariants
    def validate(self) -> None:
        """Raise :class:`InputError` naming the first CSR invariant broken."""
        xp, (n_rows, n_cols) = self.xp, self.shape
        if self.indptr.shape[0] != n_rows + 1:
            raise InputError(f"indptr has {self.indptr.shape[0]} entries, expected n_rows + 1 = {n_rows + 1}")
        if self.indices.shape[0] != self.nnz:
            raise InputError(f"indices has {self.indices.shape[0]} entries but data has {self.nnz}")
        if int(self.indptr[0]) != 0:
            raise InputError(f"indptr[0] must be 0, got {int(self.indptr[0])}")
        if int(self.indptr[-1]) != self.nnz:
            raise InputError(f"indptr[-1] = {int(self.indptr[-1])} but nnz = {self.nnz}")
        if n_rows and bool((xp.diff(self.indptr) < 0).any()):
            row = int(xp.argmax(xp.diff(self.indptr) < 0))
            raise InputError(f"indptr decreases at row {row}")
        if self.nnz:
            lo, hi = int(self.indices.min()), int(self.indices.max())
            if lo < 0 or hi >= n_cols:
                bad = lo if lo < 0 else hi
                raise InputError(f"column index {bad} out of range for {n_cols} columns")

    # ------------------------------------------------------------ conversion
    @classmethod
    def from_scipy(cls, A, *, dtype=None, index_dtype=None) -> "CSRMatrix":
        """From any scipy.sparse or cupyx.scipy.sparse matrix or array."""
        A = A.tocsr()
        return cls(A.data, A.indices, A.indptr, A.shape, dtype=dtype, index_dtype=index_dtype)

    @classmethod
    def from_dense(cls, M, *, dtype=None) -> "CSRMatrix":
        """From a dense 2-D NumPy or CuPy array (zeros dropped)."""
        xp = cuda.array_module(M)
        if xp is np:
            import scipy.sparse as sp
        else:
            import cupyx.scipy.sparse as sp
        return cls.from_scipy(sp.csr_matrix(xp.asarray(M)), dtype=dtype)

    def to_scipy(self):
        """A scipy.sparse.csr_matrix on the host (copies from the GPU if needed)."""
        import scipy.sparse as sp

        host = self.to_host()
        if "scipy" not in host._cache:  # cached: the CPU backend calls this per product
            host._cache["scipy"] = sp.csr_matrix((host.data, host.indices, host.indptr), shape=self.shape)
        return host._cache["scipy"]

    def to_cupyx(self):
        """A cupyx.scipy.sparse.csr_matrix sharing this matrix's device arrays."""
        import cupyx.scipy.sparse as csp

        dev = self.to_device()
        return csp.csr_matrix((dev.data, dev.indices, dev.indptr), shape=self.shape)

    def to_device(self) -> "CSRMatrix":
        """This matrix on the GPU (self if already there; the copy is cached).

        Raises :class:`spla.DeviceMemoryError` before copying if it would not fit.
        """
        if self.on_gpu:
            return self
        if "device" not in self._cache:
            cupy = cuda.require_cupy()
            cuda.check_fits(self.nbytes)
            try:
                dev = CSRMatrix(cupy.asarray(self.data), cupy.asarray(self.indices), cupy.asarray(self.indptr),
                                self.shape, index_dtype=self.index_dtype, validate=False)
            except Exception as exc:  # free memory can shrink between the check and the copy
                if cuda.is_out_of_memory(exc):
                    raise cuda.device_memory_error(exc, "matrix") from None
                raise
            dev._cache["host"] = self
            self._cache["device"] = dev
        return self._cache["device"]

    def to_host(self) -> "CSRMatrix":
        """This matrix in NumPy arrays (self if already there)."""
        if not self.on_gpu:
            return self
        if "host" not in self._cache:
            host = CSRMatrix(self.data.get(), self.indices.get(), self.indptr.get(), self.shape,
                             index_dtype=self.index_dtype, validate=False)
            host._cache["device"] = self
            self._cache["host"] = host
        return self._cache["host"]

    def astype(self, dtype) -> "CSRMatrix":
        """Same structure with other values; self when the dtype already matches."""
        dtype = value_dtype(dtype)
        if dtype == self.dtype:
            return self
        key = ("astype", dtype.str)
        if key not in self._cache:
            self._cache[key] = CSRMatrix(self.data.astype(dtype), self.indices, self.indptr, self.shape,
                                         index_dtype=self.index_dtype, validate=False)
        return self._cache[key]

    def transpose(self) -> "CSRMatrix":
        """A^T as a new CSR matrix (cached), on the same side."""
        if "transpose" not in self._cache:
            if self.on_gpu:
                T = CSRMatrix.from_scipy(self.to_cupyx().T.tocsr(), index_dtype=self.index_dtype)
            else:
                T = CSRMatrix.from_scipy(self.to_scipy().T.tocsr(), index_dtype=self.index_dtype)
            self._cache["transpose"] = T
        return self._cache["transpose"]

    @property
    def T(self) -> "CSRMatrix":
        return self.transpose()

    def diagonal(self):
        """The main diagonal, on the matrix's side (duplicates summed, like SciPy)."""
        if self.on_gpu:
            return self.to_cupyx().diagonal()
        return self.to_scipy().diagonal()

    # ------------------------------------------------------------ products
    def __matmul__(self, other):
        # deferred imports: both modules import this one
        if getattr(other, "ndim", None) == 2:
            from .matmat import spmm

            return spmm(self, other)
        from .ops.spmv import spmv

        return spmv(self, other)

    def dot(self, other):
        return self @ other


def as_csr(A, *, dtype=None) -> CSRMatrix:
    """Any supported matrix as a CSRMatrix: CSRMatrix, scipy/cupyx sparse, dense array."""
    if isinstance(A, CSRMatrix):
        return A if dtype is None else A.astype(dtype)
    if hasattr(A, "tocsr"):
        return CSRMatrix.from_scipy(A, dtype=dtype)
    if getattr(A, "ndim", None) == 2:
        return CSRMatrix.from_dense(A, dtype=dtype)
    raise InputError(f"cannot use a {type(A).__name__} as a sparse matrix")
