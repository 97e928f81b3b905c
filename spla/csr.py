"""``CSRMatrix``: spla's one sparse container, on the host or the GPU.

Arrays follow SciPy's CSR layout (``data``, ``indices``, ``indptr``). Values
keep the dtype they are given (SciPy's sparse dtypes: bool, the integer
types, float32/float64, complex64/complex128). Indices are int32 unless the
matrix needs more: when nnz or a dimension exceeds 2**31 - 1 they switch to
int64 everywhere, so no kernel or analysis can overflow a 32-bit offset.

The sparse-array surface (operators, indexing, reductions, conversions)
follows ``scipy.sparse.csr_array`` and lives in :mod:`spla.csr_ops`; spla's
own kernels take float32/float64, which :func:`as_csr` provides.
"""

from __future__ import annotations

import numpy as np

from . import device as _device
from .errors import InputError

INT32_MAX = 2**31 - 1
VALUE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
# SciPy's sparse dtypes, less longdouble/clongdouble, which neither NumPy on every
# platform nor CuPy/cuSPARSE can carry.
SUPPORTED_DTYPES = tuple(np.dtype(t) for t in (
    np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
    np.float32, np.float64, np.complex64, np.complex128))


def index_dtype_for(nnz: int, shape) -> np.dtype:
    """int32 when every offset and index fits, else int64."""
    if nnz > INT32_MAX or max(shape, default=0) > INT32_MAX:
        return np.dtype(np.int64)
    return np.dtype(np.int32)


def check_dtype(dtype) -> np.dtype:
    """``dtype`` as a NumPy dtype if a CSRMatrix can hold it, else :class:`InputError`."""
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        dtype = None
    if dtype not in SUPPORTED_DTYPES:
        names = ", ".join(d.name for d in SUPPORTED_DTYPES)
        raise InputError(f"CSRMatrix does not support dtype {dtype}; the supported ones are {names}")
    return dtype


def value_dtype(dtype) -> np.dtype:
    """The dtype spla's kernels compute in: float32/float64 kept, other real types -> float64."""
    dtype = np.dtype(dtype)
    if dtype in VALUE_DTYPES:
        return dtype
    if dtype.kind == "c":
        raise InputError("spla's kernels take real values; complex matrices run through CSRMatrix's "
                         "operators (A @ x, which use SciPy on the host and cupyx on the GPU)")
    if dtype.kind in "biuf":
        return np.dtype(np.float64)
    raise InputError(f"unsupported value dtype {dtype}")


def _is_sparse(obj) -> bool:
    """A scipy.sparse or cupyx.scipy.sparse matrix or array (not a dense array)."""
    return hasattr(obj, "tocsr") and hasattr(obj, "nnz") and not isinstance(obj, CSRMatrix)


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _csr_arrays(arg1, shape, dtype, copy):
    """(data, indices, indptr, shape) from any of the constructor's first-argument forms."""
    if isinstance(arg1, CSRMatrix):
        data, indices, indptr = arg1.data, arg1.indices, arg1.indptr
        if copy:
            data, indices, indptr = data.copy(), indices.copy(), indptr.copy()
        given = arg1.shape
    elif _is_sparse(arg1):
        if len(arg1.shape) != 2:
            raise InputError(f"CSRMatrix is 2-D; got a {len(arg1.shape)}-D sparse array")
        S = arg1.tocsr(copy=copy)
        nnz = int(S.indptr[-1])  # SciPy's arrays may run past nnz (spare capacity)
        data, indices, indptr, given = S.data[:nnz], S.indices[:nnz], S.indptr, S.shape
    elif isinstance(arg1, tuple) and len(arg1) == 2 and all(_is_int(s) for s in arg1):
        n_rows, n_cols = (int(s) for s in arg1)
        if min(n_rows, n_cols) < 0:
            raise InputError(f"shape must be two non-negative integers, got {arg1}")
        data = np.zeros(0, dtype=np.float64 if dtype is None else dtype)
        indices = np.zeros(0, dtype=np.int32)
        indptr = np.zeros(n_rows + 1, dtype=np.int32)
        given = (n_rows, n_cols)
    elif isinstance(arg1, tuple) and len(arg1) == 3:
        data, indices, indptr = arg1
        xp = _device.array_module(data, indices, indptr)
        data, indices, indptr = (xp.array(a, copy=copy) if copy else xp.asarray(a) for a in arg1)
        given = None
    elif isinstance(arg1, tuple) and len(arg1) == 2 and isinstance(arg1[1], tuple):
        values, (row, col) = arg1
        if _device.is_cupy_array(values):
            import cupyx.scipy.sparse as csp

            S = csp.coo_matrix((values, (row, col)), shape=shape).tocsr()
        else:
            import scipy.sparse as sp

            S = sp.coo_array((values, (row, col)), shape=shape).tocsr()
        data, indices, indptr, given = S.data, S.indices, S.indptr, S.shape
    else:
        xp = _device.array_module(arg1) if _device.is_cupy_array(arg1) else np
        dense = xp.asarray(arg1)
        if dense.ndim != 2:
            raise InputError(f"CSRMatrix needs a 2-D array, (data, indices, indptr), a sparse matrix "
                             f"or a shape (M, N); got a {dense.ndim}-D {type(arg1).__name__}")
        rows, cols = xp.nonzero(dense)
        data = dense[rows, cols]
        indices = cols
        indptr = xp.zeros(dense.shape[0] + 1, dtype=np.int64)
        indptr[1:] = xp.cumsum(xp.bincount(rows, minlength=dense.shape[0]))
        given = dense.shape
    if shape is None:
        if given is None:  # SciPy's inference: the rows indptr spans, the columns up to the largest index
            n_cols = int(indices.max()) + 1 if indices.shape[0] else 0
            given = (int(indptr.shape[0]) - 1, n_cols)
        shape = given
    elif given is not None and tuple(int(s) for s in shape) != tuple(given):
        raise InputError(f"shape {tuple(shape)} does not match the matrix's {tuple(given)}")
    return data, indices, indptr, shape


class CSRMatrix:
    """A compressed sparse row matrix whose arrays live in NumPy or CuPy.

    Takes the forms ``scipy.sparse.csr_array`` takes, on either side:

    - ``CSRMatrix((data, indices, indptr), shape=(M, N))``
    - ``CSRMatrix(data, indices, indptr, shape)`` (spla's original form)
    - ``CSRMatrix((data, (row, col)), shape=(M, N))``
    - ``CSRMatrix(S)`` for a scipy.sparse / cupyx.scipy.sparse matrix or array,
      or another CSRMatrix
    - ``CSRMatrix(D)`` for a dense 2-D NumPy or CuPy array (zeros dropped)
    - ``CSRMatrix((M, N))`` for an empty matrix (float64 unless ``dtype``)

    Parameters
    ----------
    arg1 : see above
    indices, indptr : array_like, optional
        Only with ``arg1`` as ``data`` (the four-argument form).
    shape : (int, int), optional
        Inferred like SciPy when omitted.
    dtype : dtype, optional
        Value type, kept exactly (one of :data:`SUPPORTED_DTYPES`, else
        :class:`InputError`); default keeps the input's.
    index_dtype : int32 or int64, optional
        Default is the narrowest that holds nnz and both dimensions; int64 may
        be forced (int32 is refused where it would overflow).
    validate : bool
        Check the CSR invariants (monotone indptr, indices in range).
    copy : bool
        Copy the input arrays (default shares them where it can, as SciPy does).

    Notes
    -----
    The operators and methods follow ``scipy.sparse.csr_array`` (``*`` is
    elementwise, ``@`` is the matrix product); see :mod:`spla.csr_ops` for
    where they differ because CSRMatrix is 2-D only.

    See Also
    --------
    scipy.sparse.csr_array, cupyx.scipy.sparse.csr_matrix
    """

    # NumPy operators return NotImplemented instead of treating A as an object array.
    __array_ufunc__ = None
    __array_priority__ = 10.1
    format = "csr"
    ndim = 2

    def __init__(self, arg1, indices=None, indptr=None, shape=None, *, dtype=None, index_dtype=None,
                 validate=True, copy=False):
        if indices is None and indptr is None:
            data, indices, indptr, shape = _csr_arrays(arg1, shape, dtype, copy)
        elif indices is None or indptr is None or shape is None:
            raise InputError("the four-argument form is CSRMatrix(data, indices, indptr, shape)")
        else:
            data = arg1
        xp = _device.array_module(data, indices, indptr)
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
        self.data = data.astype(check_dtype(data.dtype if dtype is None else dtype), copy=False)
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
    def size(self) -> int:
        """Stored values, explicit zeros included (SciPy's ``size``)."""
        return self.nnz

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
        return _device.is_cupy_array(self.data)

    @property
    def device(self) -> str:
        return "gpu" if self.on_gpu else "cpu"

    @property
    def xp(self):
        return _device.array_module(self.data)

    @property
    def nbytes(self) -> int:
        return int(self.data.nbytes + self.indices.nbytes + self.indptr.nbytes)

    def row_lengths(self):
        """nnz per row, as an int64 array on the matrix's side."""
        return self.xp.diff(self.indptr).astype(np.int64)

    def __len__(self):
        raise TypeError("sparse array length is ambiguous; use getnnz() or shape[0]")

    def getnnz(self) -> int:
        return self.nnz

    def count_nonzero(self) -> int:
        """Nonzero values, duplicates added up first (SciPy's ``count_nonzero``)."""
        return _ops.count_nonzero(self)

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

    def _set_arrays(self, data, indices, indptr) -> None:
        """Replace the arrays in place (SciPy's in-place clean-ups) and drop derived data,
        including the link from a host/device twin, which no longer matches."""
        for twin_key, back_key in (("host", "device"), ("device", "host")):
            twin = self._cache.get(twin_key)
            if twin is not None and twin._cache.get(back_key) is self:
                del twin._cache[back_key]
        self.data, self.indices, self.indptr = data, indices, indptr
        self._cache = {}

    def refresh(self) -> None:
        """Forget what spla derived from the arrays: call after writing into ``data``,
        ``indices`` or ``indptr`` in place.

        spla caches, on the matrix, copies and plans made from its arrays: the host or
        device twin, the SpMV launchers, the ``dia`` kernel's diagonals (and their palette),
        ``staged``'s palette of the values, ``adaptive``'s dense panels (copies of values), the
        ``band`` kernel's first columns and the ``rle`` kernel's runs (from the indices), row
        statistics and tuning. Kernels that read the arrays themselves see in-place writes, but
        those copies do not.
        """
        self._set_arrays(self.data, self.indices, self.indptr)

    # ------------------------------------------------------------ conversion
    @classmethod
    def from_scipy(cls, A, *, dtype=None, index_dtype=None) -> CSRMatrix:
        """From any scipy.sparse or cupyx.scipy.sparse matrix or array."""
        A = A.tocsr()
        return cls(A.data, A.indices, A.indptr, A.shape, dtype=dtype, index_dtype=index_dtype)

    @classmethod
    def from_dense(cls, M, *, dtype=None) -> CSRMatrix:
        """From a dense 2-D NumPy or CuPy array (zeros dropped)."""
        return cls(M, dtype=dtype)

    def to_scipy(self):
        """A scipy.sparse.csr_matrix on the host (copies from the GPU if needed)."""
        import scipy.sparse as sp

        host = self.to_host()
        if "scipy" not in host._cache:  # cached: the CPU backend calls this per product
            host._cache["scipy"] = sp.csr_matrix((host.data, host.indices, host.indptr), shape=self.shape)
        return host._cache["scipy"]

    def to_cupyx(self):
        """A cupyx.scipy.sparse.csr_matrix sharing this matrix's device arrays.

        cupyx holds bool, float32/float64 and complex64/complex128 values only;
        an integer matrix raises :class:`InputError` (use ``astype`` first).
        """
        import cupyx.scipy.sparse as csp

        from .csr_ops import CUPYX_DTYPES

        if self.dtype not in CUPYX_DTYPES:
            raise InputError(f"cupyx.scipy.sparse does not hold {self.dtype} values; "
                             f"convert with astype() to one of {', '.join(d.name for d in CUPYX_DTYPES)}")
        dev = self.to_device()
        return csp.csr_matrix((dev.data, dev.indices, dev.indptr), shape=self.shape)

    def to_device(self) -> CSRMatrix:
        """This matrix on the GPU (self if already there; the copy is cached).

        Raises :class:`spla.DeviceMemoryError` before copying if it would not fit.
        """
        if self.on_gpu:
            return self
        if "device" not in self._cache:
            cupy = _device.require_cupy()
            _device.check_fits(self.nbytes)
            try:
                dev = CSRMatrix(cupy.asarray(self.data), cupy.asarray(self.indices), cupy.asarray(self.indptr),
                                self.shape, index_dtype=self.index_dtype, validate=False)
            except Exception as exc:  # free memory can shrink between the check and the copy
                if _device.is_out_of_memory(exc):
                    raise _device.device_memory_error(exc, "matrix") from None
                raise
            dev._cache["host"] = self
            self._cache["device"] = self._share_structure_flags(dev)
        return self._cache["device"]

    def to_host(self) -> CSRMatrix:
        """This matrix in NumPy arrays (self if already there)."""
        if not self.on_gpu:
            return self
        if "host" not in self._cache:
            host = CSRMatrix(self.data.get(), self.indices.get(), self.indptr.get(), self.shape,
                             index_dtype=self.index_dtype, validate=False)
            host._cache["device"] = self
            self._cache["host"] = self._share_structure_flags(host)
        return self._cache["host"]

    def astype(self, dtype, copy: bool = False) -> CSRMatrix:
        """Same structure with values of exactly ``dtype``.

        Any of :data:`SUPPORTED_DTYPES` (NumPy's casting, as SciPy's
        ``astype``); others raise :class:`InputError` naming the supported
        ones. Unlike SciPy, ``copy`` defaults to False: the matrix itself comes
        back when the dtype already matches, and conversions are cached, so
        repeated products reuse one converted copy and its plans.
        """
        dtype = check_dtype(dtype)
        if dtype == self.dtype:
            return self.copy() if copy else self
        key = ("astype", dtype.str)
        if copy or key not in self._cache:
            data = self.data
            if self.on_gpu and dtype.kind == "u" and data.dtype.kind == "f":
                # float -> unsigned is undefined in C for negatives: CuPy gives 0 where NumPy
                # wraps (-1.0 -> 255); going through int64 gives NumPy's answer
                data = data.astype(np.int64)
            converted = CSRMatrix(data.astype(dtype), self.indices, self.indptr, self.shape,
                                  index_dtype=self.index_dtype, validate=False)
            if copy:
                return converted
            self._cache[key] = self._share_structure_flags(converted)
        return self._cache[key]

    def copy(self) -> CSRMatrix:
        """A deep copy on the same side."""
        return self._share_structure_flags(CSRMatrix(self.data.copy(), self.indices.copy(), self.indptr.copy(),
                                                     self.shape, index_dtype=self.index_dtype, validate=False))

    def transpose(self, axes=None, copy=False) -> CSRMatrix:
        """A^T as a new CSR matrix (cached), on the same side."""
        if axes is not None and tuple(axes) != (1, 0):
            raise ValueError("Sparse arrays/matrices do not support an 'axes' parameter because swapping "
                             "dimensions is the only logical permutation.")
        if "transpose" not in self._cache:
            from .csr_ops import transpose

            self._cache["transpose"] = transpose(self)
        return self._cache["transpose"]

    @property
    def T(self) -> CSRMatrix:
        return self.transpose()

    @property
    def mT(self) -> CSRMatrix:
        return self.transpose()

    # ------------------------------------------------------------ products
    def __matmul__(self, other):
        return _ops.matmul(self, other)

    def __rmatmul__(self, other):
        return _ops.rmatmul(self, other)

    def dot(self, other):
        return self @ other

    def matvec(self, x):
        """A @ x for a vector of shape (n,) or (n, 1), the shape kept (``LinearOperator`` protocol)."""
        return self @ x

    def rmatvec(self, x):
        """A^H @ x (conjugate transpose, as SciPy's ``LinearOperator.rmatvec``)."""
        return _ops.adjoint_matmul(self, x)

    def matmat(self, X):
        return self @ X

    def rmatmat(self, X):
        return _ops.adjoint_matmul(self, X)

    def __array_function__(self, func, types, args, kwargs):
        return _ops.array_function(self, func, args, kwargs)

    # ------------------------------------------------------------ arithmetic
    def __neg__(self):
        return _ops.negative(self)

    def __abs__(self):
        return _ops.absolute(self)

    def __add__(self, other):
        return _ops.add(self, other)

    def __radd__(self, other):
        return _ops.add(self, other)

    def __sub__(self, other):
        return _ops.subtract(self, other)

    def __rsub__(self, other):
        return _ops.rsubtract(self, other)

    def __mul__(self, other):
        """Elementwise, as ``csr_array`` (``@`` is the matrix product)."""
        return _ops.multiply(self, other)

    def __rmul__(self, other):
        return _ops.multiply(self, other)

    def __truediv__(self, other):
        return _ops.divide(self, other)

    def multiply(self, other):
        """Elementwise product with a scalar, a dense array (broadcast) or a sparse matrix."""
        return _ops.multiply(self, other)

    def power(self, n, dtype=None) -> CSRMatrix:
        """Elementwise power of the stored values (SciPy refuses ``n == 0``)."""
        return _ops.power(self, n, dtype)

    def conj(self, copy=True) -> CSRMatrix:
        return _ops.conj(self)

    conjugate = conj

    def __bool__(self):
        if self.shape == (1, 1):
            return self.count_nonzero() != 0
        raise ValueError("The truth value of an array with more than one element is ambiguous. "
                         "Use a.any() or a.all().")

    # ------------------------------------------------------------ indexing
    def __getitem__(self, key):
        """``A[i, j]`` a scalar; ``A[i]``, slices and index arrays a CSRMatrix (2-D, like csr_matrix)."""
        return _ops.getitem(self, key)

    # ------------------------------------------------------------ reductions
    def sum(self, axis=None, dtype=None):
        """Sum of all values or along an axis (1-D on the matrix's side), SciPy's dtypes."""
        return _ops.sum_(self, axis, dtype)

    def mean(self, axis=None, dtype=None):
        return _ops.mean(self, axis, dtype)

    def max(self, axis=None, *, explicit=False):
        return _ops.max_(self, axis, explicit)

    def min(self, axis=None, *, explicit=False):
        return _ops.min_(self, axis, explicit)

    def diagonal(self, k: int = 0):
        """The k-th diagonal, on the matrix's side (duplicates summed, like SciPy)."""
        return _ops.diagonal(self, k)

    def trace(self, offset: int = 0):
        return _ops.trace(self, offset)

    # ------------------------------------------------------------ formats
    def toarray(self):
        """Dense NumPy (host) or CuPy (GPU) array."""
        return _ops.toarray(self)

    def todense(self):
        """Dense array, as ``csr_array.todense`` (not an np.matrix)."""
        return _ops.toarray(self)

    def tocoo(self):
        """SciPy ``coo_array`` on the host, cupyx ``coo_matrix`` on the GPU."""
        return _ops.to_library(self, "coo")

    def tocsc(self):
        """SciPy ``csc_array`` on the host, cupyx ``csc_matrix`` on the GPU."""
        return _ops.to_library(self, "csc")

    def tocsr(self, copy=False) -> CSRMatrix:
        return self.copy() if copy else self

    def sum_duplicates(self) -> None:
        """Add up duplicate entries and sort each row's indices, in place."""
        if not self.has_canonical_format:
            _ops._clean_up(self, "sum_duplicates")

    def eliminate_zeros(self) -> None:
        """Drop stored zeros, in place."""
        if self.nnz and not bool(self.data.all()):
            _ops._clean_up(self, "eliminate_zeros")

    def sort_indices(self) -> None:
        """Sort each row's column indices, in place."""
        if not self.has_sorted_indices:
            _ops._clean_up(self, "sort_indices")

    @property
    def has_sorted_indices(self) -> bool:
        """Column indices ascend in every row (cached like :attr:`has_canonical_format`)."""
        return self._structure_flag("sorted", lambda: (self._known_flag("canonical") is True
                                                       or _ops.has_sorted_indices(self)))

    @property
    def has_canonical_format(self) -> bool:
        """Sorted indices and no duplicates in every row.

        Found once and cached, as SciPy caches it: products and clean-ups ask on every call.
        On the GPU the check is one pass that also finds whether the rows are sorted and the
        longest row, and one host read. The answer holds while ``indices`` and ``indptr`` are
        the same arrays (in-place clean-ups drop it); code that writes into them must build a
        new matrix.
        """
        return self._structure_flag("canonical", lambda: _ops.has_canonical_format(self))

    def _known_flag(self, key: str) -> bool | None:
        """A cached structure flag, None if unknown or found for other index arrays."""
        cached = self._cache.get(key)
        if cached is None or cached[0] is not self.indices or cached[1] is not self.indptr:
            return None
        return cached[2]

    def _structure_flag(self, key: str, find) -> bool:
        flag = self._known_flag(key)
        if flag is None:
            flag = bool(find())
            self._cache[key] = (self.indices, self.indptr, flag)
        return flag

    def _known_longest_row(self) -> int | None:
        """The longest row's length if found for the current ``indptr``, else None."""
        cached = self._cache.get("longest-row")
        if cached is None or cached[0] is not self.indptr:
            return None
        return cached[1]

    def _remember_structure(self, *, sorted_rows: bool, canonical: bool, longest_row: int | None = None) -> None:
        """Cache what is known of the structure (kept while ``indices``/``indptr`` are these arrays)."""
        self._cache["sorted"] = (self.indices, self.indptr, bool(sorted_rows))
        self._cache["canonical"] = (self.indices, self.indptr, bool(canonical))
        if longest_row is not None:
            self._cache["longest-row"] = (self.indptr, int(longest_row))

    def _share_structure_flags(self, twin: CSRMatrix) -> CSRMatrix:
        """Give ``twin`` (the same structure as this matrix) the structure facts found so far."""
        for key in ("canonical", "sorted"):
            flag = self._known_flag(key)
            if flag is not None:
                twin._cache[key] = (twin.indices, twin.indptr, flag)
        longest = self._known_longest_row()
        if longest is not None:
            twin._cache["longest-row"] = (twin.indptr, longest)
        return twin


def as_csr(A, *, dtype=None) -> CSRMatrix:
    """Any supported matrix as a CSRMatrix in a dtype spla's kernels take.

    ``A`` may be a CSRMatrix, a scipy/cupyx sparse matrix or a dense array.
    Without ``dtype`` the values are float32/float64 (other real types become
    float64, as the kernels need; complex raises :class:`InputError`); with
    ``dtype`` they are exactly that dtype.
    """
    if isinstance(A, CSRMatrix):
        csr = A
    elif _is_sparse(A) or getattr(A, "ndim", None) == 2:
        csr = CSRMatrix(A)
    else:
        raise InputError(f"cannot use a {type(A).__name__} as a sparse matrix")
    return csr.astype(value_dtype(csr.dtype) if dtype is None else dtype)


from . import csr_ops as _ops  # noqa: E402  (the surface module needs CSRMatrix defined first)
