"""The sparse-array surface of :class:`spla.CSRMatrix`, with ``scipy.sparse.csr_array`` semantics.

Where each operation runs:

- On the host every operation is SciPy's own (a ``csr_array`` view of the
  matrix's arrays), so values, result dtypes and errors are SciPy's.
- On the GPU, elementwise operations on the stored values run in CuPy; the
  result dtype (and any error) comes from running the same operation on a
  1 x 1 SciPy stand-in, so the GPU side follows SciPy's dtype rules too.
  Structural operations (sums and products of sparse matrices, column
  indexing, reductions, clean-ups) run in ``cupyx.scipy.sparse``, which holds
  float32/float64/complex64/complex128 values only; integer and bool
  matrices take a round trip through SciPy on the host and come back to the
  GPU (exact, slower).
- Products with dense vectors and blocks in float32/float64 go through
  ``spla.spmv``/``spla.spmm`` (spla's kernels), after casting the matrix and
  the operand to NumPy's promoted dtype; complex products go through SciPy or
  cupyx and integer ones through SciPy: the imaginary part and integer
  exactness are never dropped.

CSRMatrix is 2-D only. Where ``csr_array`` returns a 1-D sparse array it
returns what ``csr_matrix`` returns instead: ``A[i]`` is a 1 x n CSRMatrix,
``A[:, j]`` an m x 1 one. ``max``/``min`` over an axis return dense 1-D
arrays (as ``sum`` does in SciPy).
"""

from __future__ import annotations

import functools
import inspect
import numbers
import operator

import numpy as np

from . import device as _device
from .csr import SUPPORTED_DTYPES, CSRMatrix, _is_int, _is_sparse
from .csr_passes import entry_rows
from .errors import DeviceMemoryError, InputError

CUPYX_DTYPES = tuple(np.dtype(t) for t in (np.bool_, np.float32, np.float64, np.complex64, np.complex128))
# The dtypes cupyx's structural operations (cuSPARSE) compute in; bool is held but not computed.
_CUPYX_COMPUTE = CUPYX_DTYPES[1:]
_KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


# ------------------------------------------------------------------ plumbing
def scipy_view(A, copy: bool = True):
    """A ``scipy.sparse.csr_array`` of the host arrays (copied from the GPU if needed).

    The arrays are copies: SciPy canonicalises non-canonical input in place
    (``max``, ``diagonal`` and others call ``sum_duplicates``), which must not
    reach the matrix, its twins or arrays a caller shared with it. ``copy=False``
    only for operations that read their operands (products).
    """
    import scipy.sparse as sp

    h = A.to_host()
    if not copy:
        return sp.csr_array((h.data, h.indices, h.indptr), shape=h.shape)
    return sp.csr_array((h.data.copy(), h.indices.copy(), h.indptr.copy()), shape=h.shape)


def _stand_in(obj):
    """A 1 x 1 SciPy (or 1-element NumPy) object of obj's dtype, to learn SciPy's result dtype."""
    import scipy.sparse as sp

    if isinstance(obj, CSRMatrix) or _is_sparse(obj):
        return sp.csr_array(np.ones((1, 1), dtype=obj.dtype))
    if hasattr(obj, "dtype") and hasattr(obj, "ndim") and obj.ndim > 0:
        return np.ones((1,) * obj.ndim, dtype=obj.dtype)
    return obj


def _scipy_dtype(op, *operands) -> np.dtype:
    """The dtype SciPy gives ``op(*operands)``; SciPy's error if it refuses the operation."""
    result = op(*(_stand_in(o) for o in operands))
    return np.dtype(getattr(result, "dtype", type(result)))


def _wrap(result, gpu: bool):
    """A SciPy/cupyx result as spla returns it: sparse -> CSRMatrix, dense -> array, on the GPU if ``gpu``."""
    if _is_sparse(result):
        if len(result.shape) == 1:  # csr_array's 1-D results: spla is 2-D only, give them dense
            result = result.toarray()
        else:
            out = CSRMatrix(result, validate=False)  # SciPy's and cupyx's results are valid CSR
            return out.to_device() if gpu and not out.on_gpu else out
    if isinstance(result, np.ndarray):
        result = np.asarray(result)  # np.matrix from a csr_matrix -> ndarray
        if gpu:
            return _device.require_cupy().asarray(result)
    return result


def _compute_on_gpu(*dtypes) -> bool:
    return all(np.dtype(d) in _CUPYX_COMPUTE for d in dtypes)


def _on_cupyx(A) -> bool:
    """Whether A's structural operations run in cupyx: a GPU matrix of a dtype cuSPARSE computes
    in, with entries (empty matrices take SciPy's path, where every edge case is SciPy's own)."""
    return A.on_gpu and _compute_on_gpu(A.dtype) and A.nnz > 0 and 0 not in A.shape


def _library(A):
    """(the matrix as SciPy csr_array or cupyx csr_matrix, whether results go back to the GPU)."""
    if _on_cupyx(A):
        return _cupyx_copy(A), True
    return scipy_view(A), A.on_gpu


def _cupyx_copy(A, dtype=None, copy: bool = True):
    """A cupyx csr_matrix of A's device values (in ``dtype``), duplicates summed where cuSPARSE
    computes: its dense and product routines want canonical rows.

    cupyx canonicalises in place, so the arrays are copies. ``copy=False`` only for operations
    that read their operands (products): a canonical matrix then lends its own arrays. Either
    way the structure flags spla knows go with it, which spares cupyx its own check and sync.
    """
    base = A.to_device()
    dtype = base.dtype if dtype is None else np.dtype(dtype)
    if not _compute_on_gpu(dtype):  # bool: held by cupyx, not computed in, so never summed
        return _cupyx_matrix(base.data.astype(dtype), base.indices.copy(), base.indptr.copy(), A.shape)
    canonical = base.has_canonical_format  # asked of A's own structure, whose answer A keeps
    if canonical and not copy:
        return _lent_operand(base.astype(dtype))
    return _canonical_copy(base, canonical, base._known_flag("sorted"), dtype)


@functools.cache
def _cupyx_from_parts():
    """cupyx's constructor from checked arrays, which takes the structure flags and reads nothing
    back from the device; None where this CuPy lacks it (or takes other arguments)."""
    import cupyx.scipy.sparse as csp

    build = getattr(csp.csr_matrix, "_from_parts", None)
    try:
        parameters = inspect.signature(build).parameters if build is not None else {}
    except (TypeError, ValueError):
        return None
    return build if {"has_canonical_format", "has_sorted_indices"} <= set(parameters) else None


def _cupyx_matrix(data, indices, indptr, shape, canonical=None, sorted_rows=None):
    """A cupyx csr_matrix over these device arrays (shared, not copied), carrying the flags given.

    int32 indices go through cupyx's constructor from checked arrays: no host read, where the
    public constructor reads indptr's two ends back (a device sync per matrix). int64 indices
    keep the public constructor and its choice of index dtype (int32 where they fit), so
    cuSPARSE runs the same 32-bit kernels as before.
    """
    import cupyx.scipy.sparse as csp

    lean = indices.dtype == np.int32 and data.dtype in CUPYX_DTYPES  # else cupyx's own errors and choices
    build = _cupyx_from_parts() if lean else None
    if build is not None:
        return build(data, indices, indptr, tuple(shape), has_canonical_format=canonical,
                     has_sorted_indices=True if canonical else sorted_rows)
    S = csp.csr_matrix((data, indices, indptr), shape=shape)
    if canonical:
        S.has_canonical_format = True
    return S


def _lent_operand(dev):
    """A cupyx view of a canonical device matrix's own arrays, marked canonical (no copy, no
    check), cached while they are the matrix's arrays."""
    arrays = (dev.data, dev.indices, dev.indptr)
    lent = dev._cache.get("cupyx-operand")  # (the arrays it was built on, the view)
    if lent is None or any(old is not new for old, new in zip(lent[0], arrays)):
        lent = dev._cache["cupyx-operand"] = (arrays, _cupyx_matrix(*arrays, dev.shape, canonical=True))
    return lent[1]


def _canonical_copy(dev, canonical: bool, sorted_rows, dtype):
    """A cupyx matrix of copies of dev's arrays (values in ``dtype``), duplicates summed and rows
    sorted unless ``canonical``; cupyx is told what spla found, so it does not check again."""
    S = _cupyx_matrix(dev.data.astype(dtype), dev.indices.copy(), dev.indptr.copy(), dev.shape,
                      canonical=canonical, sorted_rows=sorted_rows)
    if not canonical:
        S.sum_duplicates()
    return S


def _same_side(A, other) -> CSRMatrix:
    """other (CSRMatrix or scipy/cupyx sparse) as a CSRMatrix on A's side."""
    B = other if isinstance(other, CSRMatrix) else CSRMatrix(other)
    return B.to_device() if A.on_gpu else B.to_host()


def _with_data(A, data) -> CSRMatrix:
    return CSRMatrix(data, A.indices, A.indptr, A.shape, index_dtype=A.index_dtype, validate=False)


def _on_values(A, scipy_op, value_op, deduped: bool = False) -> CSRMatrix:
    """An operation on the stored values that keeps the structure (SciPy's ``_with_data``).

    ``deduped``: the operation is not linear (abs, power), so SciPy sums duplicate
    entries first (its ``_deduped_data``); a non-canonical GPU matrix takes SciPy's path.
    """
    if not A.on_gpu or (deduped and not has_canonical_format(A)):
        return _wrap(scipy_op(scipy_view(A)), A.on_gpu)
    dtype = _scipy_dtype(scipy_op, A)
    data = A.data.astype(dtype) if np.can_cast(A.dtype, dtype) else A.data
    return _with_data(A, value_op(data).astype(dtype, copy=False))


def _is_scalar(value) -> bool:
    return isinstance(value, numbers.Number) or (isinstance(value, np.generic)) or (
        getattr(value, "ndim", None) == 0 and not _is_sparse(value))


def _as_dense(value):
    """A NumPy/CuPy array from an array-like operand (lists become NumPy)."""
    return value if _device.is_cupy_array(value) else np.asarray(value)


# ------------------------------------------------------------------ arithmetic
def negative(A) -> CSRMatrix:
    return _on_values(A, operator.neg, operator.neg)


def absolute(A) -> CSRMatrix:
    return _on_values(A, abs, abs, deduped=True)


def conj(A) -> CSRMatrix:
    if A.dtype.kind != "c":
        return A.copy()
    return _on_values(A, lambda S: S.conj(), lambda d: d.conj())


def scalar_multiply(A, c) -> CSRMatrix:
    return _on_values(A, lambda S: S * c, lambda d: d * c)


def scalar_divide(A, c) -> CSRMatrix:
    return _on_values(A, lambda S: S / c, lambda d: d * (1 / c))


def power(A, n, dtype=None) -> CSRMatrix:
    if not _is_scalar(n):
        raise NotImplementedError("input is not scalar")
    return _on_values(A, lambda S: S.power(n, dtype=dtype),
                      lambda d: d ** n, deduped=True)


def _binary(A, other, op, gpu_op=None, gpu_dense_op=None):
    """``op(A, other)`` for a sparse or dense ``other``, SciPy's semantics and dtype on both sides.

    On the GPU, ``gpu_op`` computes it for a sparse ``other`` in cupyx and
    ``gpu_dense_op(A, D)`` for a dense one in CuPy, both with operands cast to
    SciPy's result dtype; without them, or for dtypes cupyx lacks, the GPU side
    goes through SciPy and back.
    """
    if isinstance(other, CSRMatrix) or _is_sparse(other):
        B = _same_side(A, other)
        if not A.on_gpu:
            return _wrap(op(scipy_view(A), scipy_view(B)), False)
        dtype = _scipy_dtype(op, A, B)
        if gpu_op is not None and _compute_on_gpu(dtype) and A.nnz and B.nnz:
            return _wrap(_cupyx_call(lambda: gpu_op(_cupyx_copy(A, dtype), _cupyx_copy(B, dtype))),
                         True)
        return _wrap(op(scipy_view(A), scipy_view(B)), True)
    dense = _as_dense(other)
    if _device.is_cupy_array(dense) or A.on_gpu:
        cupy = _device.require_cupy()
        dtype = _scipy_dtype(op, A, dense)
        dense = cupy.asarray(dense)
        dev = A.to_device()
        if gpu_dense_op is not None and np.can_cast(dense.dtype, dtype):
            # gpu_dense_op gets A in its own dtype and decides where to promote, as SciPy does
            return _cupyx_call(lambda: gpu_dense_op(dev, dense.astype(dtype)).astype(dtype, copy=False))
        return _wrap(op(scipy_view(A), cupy.asnumpy(dense)), True)
    return _wrap(op(scipy_view(A), dense), False)


def add(A, other):
    if _is_scalar(other):
        if other == 0:
            return A.copy()
        raise NotImplementedError("adding a nonzero scalar to a sparse array is not supported")
    # SciPy adds each entry into the promoted dense result; it subtracts A.todense() in A's dtype
    return _binary(A, other, operator.add, operator.add, lambda a, d: a.astype(d.dtype).toarray() + d)


def subtract(A, other):
    if _is_scalar(other):
        if other == 0:
            return A.copy()
        raise NotImplementedError("subtracting a nonzero scalar from a sparse array is not supported")
    return _binary(A, other, operator.sub, operator.sub, lambda a, d: a.toarray() - d)


def rsubtract(A, other):
    if _is_scalar(other):
        if other == 0:
            return negative(A)
        raise NotImplementedError("subtracting a sparse array from a nonzero scalar is not supported")
    return _binary(A, other, lambda a, b: b - a, lambda a, b: b - a, lambda a, d: d - a.toarray())


def multiply(A, other):
    """Elementwise product (SciPy's ``multiply``; a scalar scales the values)."""
    if _is_scalar(other):
        return scalar_multiply(A, other)
    return _binary(A, other, lambda a, b: a.multiply(b), lambda a, b: a.multiply(b), _multiply_dense)


def _multiply_dense(A, D):
    """A * D for a dense D that broadcasts to A's shape: the stored entries scaled, structure kept
    (SciPy's result, whose explicit zeros may differ but whose values do not)."""
    xp = A.xp
    if np.broadcast_shapes(D.shape, A.shape) != A.shape:
        raise ValueError(f"inconsistent shapes {A.shape} and {D.shape}")
    D = xp.broadcast_to(D, A.shape)
    return _with_data(A, A.data * D[entry_rows(A.indptr, xp.arange(A.nnz, dtype=A.indptr.dtype)), A.indices])


def divide(A, other):
    if _is_scalar(other):
        return scalar_divide(A, other)
    return _binary(A, other, operator.truediv)


def _cupyx_call(fn):
    """Run a cupyx operation, turning CuPy's out-of-memory into DeviceMemoryError."""
    try:
        return fn()
    except Exception as exc:
        if _device.is_out_of_memory(exc):
            raise _device.device_memory_error(exc, "sparse result") from None
        raise


# ------------------------------------------------------------------ products
def _upcast(*dtypes) -> np.dtype:
    """SciPy's ``upcast``: NumPy's promotion, then the first sparse dtype that holds it."""
    dtype = np.result_type(*dtypes)
    if dtype in SUPPORTED_DTYPES:
        return dtype
    for candidate in SUPPORTED_DTYPES:
        if np.can_cast(dtype, candidate):
            return candidate
    raise InputError(f"no sparse dtype holds {dtype}")


# cuSPARSE's SpGEMM counts the intermediate products of one call in 32 bits.
_CUSPARSE_PRODUCTS = 2**31 - 1


def spgemm_products(A, B) -> int:
    """The intermediate products of A @ B (each stored A[i, k] meets the stored row k of B),
    an upper bound on nnz(A @ B): a gather and a sum on A's side, no copy of A."""
    if not A.nnz:
        return 0
    return int(B.xp.diff(B.indptr)[A.indices].sum(dtype=np.int64))


def spgemm_bytes(products: int, n_rows: int, dtype) -> int:
    """Device bytes cuSPARSE's SpGEMM may need for ``products`` intermediate products: it keeps
    the products, the result and its work buffers, each up to that size in values and indices."""
    entry = np.dtype(dtype).itemsize + 4
    return 3 * products * entry + 2 * (n_rows + 1) * 8


def _fits_in_one_call(A, B, dtype, free: int) -> bool:
    """Whether cuSPARSE can form A @ B in one call: its products within 32 bits and its
    memory within ``free``. nnz(A) times B's longest row (known once B's structure is) bounds
    the products without a pass over A; the exact count only when that bound fails."""
    def fits(products: int) -> bool:
        return products <= _CUSPARSE_PRODUCTS and spgemm_bytes(products, A.shape[0], dtype) <= free

    return fits(A.nnz * B._known_longest_row()) or fits(spgemm_products(A, B))


def _row_blocks(row_products, budget: int) -> list[int]:
    """Row boundaries [0, ..., n_rows] cutting A into blocks of at most ``budget`` products,
    greedily; ``row_products`` is the running count of products before each row (n_rows + 1).
    An empty list when a single row has more products than the budget."""
    bounds, row, n_rows = [0], 0, len(row_products) - 1
    while row < n_rows:
        nxt = int(np.searchsorted(row_products, row_products[row] + budget, side="right")) - 1
        if nxt <= row:
            return []
        bounds.append(nxt)
        row = nxt
    return bounds


def _row_block(S, first: int, last: int, start: int, stop: int):
    """Rows [first, last) of the cupyx csr_matrix S (entries [start, stop)), canonical as S is."""
    indptr = (S.indptr[first:last + 1] - start).astype(S.indices.dtype, copy=False)
    return _cupyx_matrix(S.data[start:stop], S.indices[start:stop], indptr, (last - first, S.shape[1]),
                         canonical=True)


def _spgemm_in_row_blocks(A, B, dtype, a, b):
    """A @ B in row blocks of A, each one cuSPARSE call within its 32-bit product count and half
    the free memory (the other half holds the finished blocks); DeviceMemoryError when one row
    alone does not fit. ``a`` and ``b`` are A's and B's canonical cupyx operands."""
    import cupyx.scipy.sparse as csp

    cupy = _device.require_cupy()
    free = _device.free_device_memory()
    entry = np.dtype(dtype).itemsize + 4
    budget = min(_CUSPARSE_PRODUCTS, (free // 2 - 16 * (A.shape[0] + 1)) // (3 * entry))
    running = cupy.cumsum(cupy.diff(b.indptr)[a.indices], dtype=np.int64)  # products up to each entry
    row_products = cupy.asnumpy(cupy.concatenate((cupy.zeros(1, dtype=np.int64), running))[a.indptr])
    del running
    bounds = _row_blocks(row_products, budget) if budget > 0 else []
    if not bounds:
        raise DeviceMemoryError(spgemm_bytes(int(np.diff(row_products).max()), 1, dtype), free,
                                "sparse product A @ B (one row of it)")
    indptr = cupy.asnumpy(a.indptr)
    blocks = []
    for first, last in zip(bounds[:-1], bounds[1:]):
        start, stop = int(indptr[first]), int(indptr[last])
        # rows without entries have an empty product: no cuSPARSE call for them
        blocks.append(_row_block(a, first, last, start, stop) @ b if stop > start
                      else csp.csr_matrix((last - first, b.shape[1]), dtype=dtype))
    offsets = np.concatenate(([0], np.cumsum([C.nnz for C in blocks])))
    out_indptr = cupy.concatenate([cupy.zeros(1, dtype=np.int64)]
                                  + [C.indptr[1:].astype(np.int64) + int(off) for C, off in zip(blocks, offsets)])
    data = cupy.concatenate([C.data for C in blocks])
    indices = cupy.concatenate([C.indices for C in blocks])
    out = CSRMatrix(data, indices, out_indptr, (A.shape[0], B.shape[1]), validate=False)
    if all(_cupyx_says_canonical(C) for C in blocks):
        out._remember_structure(sorted_rows=True, canonical=True)
    return out


def sparse_matmul(A, other, *, stage=None) -> CSRMatrix:
    """A @ B for a sparse B (SpGEMM): SciPy on the host, cuSPARSE through cupyx on the GPU.

    On the GPU the size is bounded first: one cuSPARSE call when the products fit its 32-bit
    count and free memory, else row blocks of A, each within both (DeviceMemoryError when a
    single row does not fit). Canonical operands are lent to cupyx, not copied; others are
    summed in a copy, as SciPy sums duplicates, and the operands are never changed.

    ``stage`` (GPU only) is called with each stage's name as it ends (``check``, ``bound``,
    ``operands``, ``cuSPARSE``, ``wrap``): the hook of scripts/bench_spgemm.py's breakdown.
    """
    B = _same_side(A, other)
    if A.shape[1] != B.shape[0]:
        raise ValueError(f"dimension mismatch: {A.shape} @ {B.shape}")
    if not A.on_gpu or not _compute_on_gpu(_upcast(A.dtype, B.dtype)) or not (A.nnz and B.nnz):
        return _wrap(scipy_view(A, copy=False) @ scipy_view(B, copy=False), A.on_gpu)
    dtype = _upcast(A.dtype, B.dtype)
    return _cupyx_call(lambda: _spgemm_on_gpu(A, B, dtype, stage or _no_stage))


def _no_stage(name: str) -> None:
    """The default ``stage`` hook: nothing is recorded."""


def _spgemm_on_gpu(A, B, dtype, stage) -> CSRMatrix:
    """A @ B on the device (both have entries; ``dtype`` is one cuSPARSE computes in).

    Before cuSPARSE's own work estimation, a matrix spla has not seen costs one structure pass
    (canonical or not, and B's longest row) with the free-memory query made on the host while
    it runs, and one host read for both operands; a matrix seen before costs the query alone.
    """
    free = _learn_structure([(A, ("canonical",)), (B, ("canonical", "longest-row"))],
                            meanwhile=_device.free_device_memory)
    stage("check")
    one_call = _fits_in_one_call(A, B, dtype, free)
    stage("bound")
    a = _spgemm_operand(A, dtype)
    b = a if B is A else _spgemm_operand(B, dtype)
    stage("operands")
    if not one_call:
        out = _spgemm_in_row_blocks(A, B, dtype, a, b)
        stage("cuSPARSE")
        stage("wrap")
        return out
    C = a @ b
    stage("cuSPARSE")
    out = CSRMatrix(C.data, C.indices, C.indptr, C.shape, validate=False)  # cuSPARSE's result is valid CSR
    if _cupyx_says_canonical(C):  # so a product of the product needs no structure pass
        out._remember_structure(sorted_rows=True, canonical=True)
    stage("wrap")
    return out


def _spgemm_operand(M, dtype):
    """M (on the device, its canonical flag known) as cuSPARSE's operand in ``dtype``: a
    canonical M lends its arrays (in another dtype, those of a converted copy cached on M);
    another is summed in a copy, since cupyx canonicalises its operand in place."""
    if M._known_flag("canonical"):
        return _lent_operand(M.astype(dtype))
    return _canonical_copy(M, False, M._known_flag("sorted"), dtype)


def _cupyx_says_canonical(C) -> bool:
    """Whether cupyx marked its result canonical (as it marks cuSPARSE's SpGEMM output), read
    without its property, which would run a check and sync when the mark is missing."""
    return C.nnz == 0 or getattr(C, "_has_canonical_format", None) is True


def matmul(A, other):
    """``A @ other`` with csr_array's semantics (result dtype by NumPy promotion)."""
    if isinstance(other, CSRMatrix) or _is_sparse(other):
        return sparse_matmul(A, other)
    if _is_scalar(other):
        raise ValueError("Scalar operands are not allowed, use '*' instead")
    x = _as_dense(other)
    if x.ndim not in (1, 2):
        raise ValueError(f"matmul needs a 1-D or 2-D operand, got {x.ndim}-D")
    if x.shape[0] != A.shape[1]:
        raise ValueError(f"dimension mismatch: A is {A.shape[0]}x{A.shape[1]}, operand has shape {x.shape}")
    gpu = _device.is_cupy_array(x)
    A = A.to_device() if gpu else A.to_host()  # x decides the side, as in spla.spmv
    xp = A.xp
    dtype = _upcast(A.dtype, x.dtype)
    out_shape = (A.shape[0],) + tuple(x.shape[1:])
    if A.nnz == 0 or 0 in out_shape:
        return xp.zeros(out_shape, dtype=dtype)
    if dtype in _KERNEL_DTYPES:
        from .ops.spmm import spmm
        from .ops.spmv import spmv

        kernel_A = A.astype(dtype)
        operand = xp.ascontiguousarray(x.astype(dtype, copy=False))
        return spmv(kernel_A, operand) if x.ndim == 1 else spmm(kernel_A, operand)
    if gpu and _compute_on_gpu(dtype):
        return _cupyx_copy(A, dtype, copy=False) @ x.astype(dtype)
    if gpu:  # integer and bool products: SciPy's exact arithmetic on the host
        return xp.asarray(scipy_view(A, copy=False) @ x.get())
    return np.asarray(scipy_view(A, copy=False) @ x)


def rmatmul(A, other):
    """``other @ A``: (A^T @ other^T)^T."""
    if isinstance(other, CSRMatrix) or _is_sparse(other):
        return sparse_matmul(_same_side(A, other), A)
    if _is_scalar(other):
        raise ValueError("Scalar operands are not allowed, use '*' instead")
    x = _as_dense(other)
    if x.ndim == 1:
        return matmul(_transpose_in(A, x.dtype), x)
    if x.ndim != 2:
        raise ValueError(f"matmul needs a 1-D or 2-D operand, got {x.ndim}-D")
    return matmul(_transpose_in(A, x.dtype), x.T).T


def adjoint_matmul(A, x):
    """A^H @ x without conjugating the matrix: conj(A^T @ conj(x))."""
    if A.dtype.kind != "c" and x.dtype.kind != "c":
        return matmul(_transpose_in(A, x.dtype), x)
    return matmul(_transpose_in(A, x.dtype), x.conj()).conj()


def _transpose_in(A, operand_dtype) -> CSRMatrix:
    """A^T with values already in the product's dtype: the GPU transpose sums duplicates, and
    summing them before widening would round where SciPy (summing the widened products) does not."""
    return A.astype(_upcast(A.dtype, operand_dtype)).transpose()


def transpose(A) -> CSRMatrix:
    if _on_cupyx(A):
        return CSRMatrix(_cupyx_copy(A).T.tocsr(), index_dtype=A.index_dtype)
    T = CSRMatrix(scipy_view(A).T.tocsr(), index_dtype=A.index_dtype)
    return T.to_device() if A.on_gpu else T


# ------------------------------------------------------------------ indexing
def _normalise_row(i: int, n: int) -> int:
    if not -n <= i < n:
        raise IndexError(f"row index ({i}) out of range")
    return i % n if n else i


def _row_positions(A, key):
    """The rows ``key`` picks as a slice of contiguous rows or an int64 index array."""
    n = A.shape[0]
    xp = A.xp
    if _is_int(key):
        return xp.asarray([_normalise_row(int(key), n)], dtype=np.int64)
    if isinstance(key, slice):
        start, stop, step = key.indices(n)
        if step == 1:
            return slice(start, max(start, stop))
        return xp.arange(start, stop, step, dtype=np.int64)
    rows = xp.asarray(key)
    if rows.dtype == np.bool_:
        if rows.shape != (n,):
            raise IndexError(f"boolean row index has shape {rows.shape}, the matrix has {n} rows")
        return xp.nonzero(rows)[0].astype(np.int64)
    if rows.ndim != 1 or (rows.size and rows.dtype.kind not in "iu"):
        raise IndexError("row indices must be integers, slices, or 1-D integer or boolean arrays")
    rows = rows.astype(np.int64)
    if rows.size and (int(rows.min()) < -n or int(rows.max()) >= n):
        raise IndexError(f"row index out of range for {n} rows")
    return xp.where(rows < 0, rows + n, rows)


def take_rows(A, key) -> CSRMatrix:
    """The rows ``key`` selects (an int, a slice, an index or boolean array), as CSR.

    Gathers the rows' runs of ``indices``/``data`` with array operations on the
    matrix's side: no Python loop, no conversion, one pass over the output.
    """
    rows = _row_positions(A, key)
    xp, index_dtype = A.xp, A.index_dtype
    if isinstance(rows, slice):
        lo, hi = int(A.indptr[rows.start]), int(A.indptr[rows.stop])
        indptr = A.indptr[rows.start:rows.stop + 1] - lo
        return CSRMatrix(A.data[lo:hi], A.indices[lo:hi], indptr, (rows.stop - rows.start, A.shape[1]),
                         index_dtype=index_dtype, validate=False)
    starts = A.indptr[rows].astype(np.int64)
    lengths = A.indptr[rows + 1].astype(np.int64) - starts
    indptr = xp.zeros(rows.shape[0] + 1, dtype=np.int64)
    indptr[1:] = xp.cumsum(lengths)
    total = int(indptr[-1])
    position = xp.arange(total, dtype=np.int64)
    owner = entry_rows(indptr, position)
    source = position - indptr[owner] + starts[owner]
    return CSRMatrix(A.data[source], A.indices[source], indptr, (rows.shape[0], A.shape[1]),
                     index_dtype=index_dtype, validate=False)


def _element(A, i, j):
    n_rows, n_cols = A.shape
    i = _normalise_row(int(i), n_rows)
    if not -n_cols <= j < n_cols:
        raise IndexError(f"column index ({j}) out of range")
    j = int(j) % n_cols
    lo, hi = int(A.indptr[i]), int(A.indptr[i + 1])
    values = A.data[lo:hi][A.indices[lo:hi] == j]
    if A.dtype == np.bool_:
        value = values.any()
    else:
        value = values.sum(dtype=A.dtype)  # duplicates add up, as in SciPy
    return value if A.on_gpu else A.dtype.type(value)


def _is_full_slice(key) -> bool:
    return isinstance(key, slice) and key == slice(None)


def _is_array_key(key) -> bool:
    return not (_is_int(key) or isinstance(key, slice))


def _library_index(A, key):
    """``csr_matrix[key]`` (2-D results, as spla is 2-D) in SciPy, or in cupyx on the GPU."""
    paired = _is_array_key(key[0]) and _is_array_key(key[1])  # rare: SciPy's rules on the host
    if _on_cupyx(A) and not paired:
        cupy = _device.require_cupy()
        key = tuple(k if _is_int(k) or isinstance(k, slice) else cupy.asarray(k) for k in key)
        return _wrap(_cupyx_copy(A)[key], True)
    import scipy.sparse as sp

    key = tuple(k if _is_int(k) or isinstance(k, slice) else _device.to_host(k) for k in key)
    return _wrap(sp.csr_matrix(scipy_view(A))[key], A.on_gpu)


def getitem(A, key):
    """``A[key]``: rows fast on both sides, columns through SciPy/cupyx."""
    if isinstance(key, tuple):
        if len(key) == 1:
            key = (key[0], slice(None))
        if len(key) != 2:
            raise IndexError(f"CSRMatrix takes one or two indices, got {len(key)}")
        row, col = key
    else:
        row, col = key, slice(None)
    if row is Ellipsis:
        row = slice(None)
    if col is Ellipsis:
        col = slice(None)
    if _is_int(row) and _is_int(col):
        return _element(A, row, col)
    if _is_array_key(row) and _is_array_key(col):  # paired fancy indices: SciPy's rules
        return _library_index(A, (row, col))
    rows = take_rows(A, row)
    if _is_full_slice(col):
        return rows
    return _library_index(rows, (slice(None), col))


# ------------------------------------------------------------------ reductions
def _axis(axis):
    if axis is None:
        return None
    if isinstance(axis, tuple):
        if sorted(a % 2 for a in axis) == [0, 1]:
            return None
        if len(axis) != 1:
            raise ValueError(f"invalid axis {axis} for a 2-D array")
        axis = axis[0]
    if not _is_int(axis) or not -2 <= axis < 2:
        raise ValueError(f"axis {axis} out of range for a 2-D array")
    return int(axis) % 2


def _reduce(A, name, axis, **kwargs):
    """SciPy's reduction ``name`` on either side; axis results as dense 1-D arrays."""
    axis = _axis(axis)
    S, gpu = _library(A) if not kwargs.get("explicit") else (scipy_view(A), A.on_gpu)
    result = getattr(S, name)(axis=axis, **kwargs)
    if _is_sparse(result):  # max/min over an axis are sparse in SciPy and cupyx
        result = result.toarray()
    if _device.is_cupy_array(result):  # cupyx keeps 2-D axis results and its own dtypes
        dtype = _scipy_dtype(lambda T: getattr(T, name)(axis=axis, **kwargs), A)
        return (result if axis is None else result.ravel()).astype(dtype, copy=False)
    if axis is None:
        return result
    return _wrap(np.asarray(result).ravel(), gpu)


def _accumulate_in(A, dtype):
    """A with values in ``dtype`` where that widens them: SciPy sums duplicate entries in A's own
    dtype, then accumulates the sum or mean in the requested one; cupyx would do both in A's dtype."""
    if dtype is None or not A.on_gpu:
        return A
    wide = np.promote_types(A.dtype, dtype)  # complex64 summed as float64: complex128, then the cast
    if wide == A.dtype or wide not in SUPPORTED_DTYPES:
        return A
    if not has_canonical_format(A):
        A = A.copy()
        A.sum_duplicates()
    return A.astype(wide)


def sum_(A, axis=None, dtype=None):
    return _reduce(_accumulate_in(A, dtype), "sum", axis, dtype=dtype)


def mean(A, axis=None, dtype=None):
    return _reduce(_accumulate_in(A, dtype), "mean", axis, dtype=dtype)


def max_(A, axis=None, explicit=False):
    return _reduce(A, "max", axis, **({"explicit": True} if explicit else {}))


def min_(A, axis=None, explicit=False):
    return _reduce(A, "min", axis, **({"explicit": True} if explicit else {}))


def diagonal(A, k=0):
    """The k-th diagonal, on the matrix's side (duplicates summed, like SciPy)."""
    S, gpu = _library(A)
    diag = S.diagonal(k)
    return diag if _device.is_cupy_array(diag) else _wrap(np.asarray(diag), gpu)


def trace(A, offset=0):
    return diagonal(A, offset).sum()


# ------------------------------------------------------------------ conversions and clean-up
def toarray(A):
    S, gpu = _library(A)
    dense = S.toarray()
    return dense if _device.is_cupy_array(dense) else _wrap(np.asarray(dense), gpu)


def to_library(A, fmt: str):
    """The matrix as a SciPy ``{fmt}_array`` on the host or a cupyx ``{fmt}_matrix`` on the GPU."""
    if A.on_gpu:
        A.to_cupyx()  # InputError for the dtypes cupyx does not hold
        S = _cupyx_copy(A)
        return S.tocoo() if fmt == "coo" else S.tocsc()
    return scipy_view(A).asformat(fmt)


def _clean_up(A, method: str) -> None:
    """Run SciPy's/cupyx's in-place clean-up on copies and take its arrays."""
    if method == "eliminate_zeros" and A.on_gpu:
        # cupyx's eliminate_zeros goes through cuSPARSE's csr2csr_compress, which drops every
        # value <= 0, negatives included: keep the nonzeros with a mask and a prefix sum instead
        cupy = _device.require_cupy()
        keep = A.data != 0
        kept_before = cupy.concatenate((cupy.zeros(1, dtype=np.int64), cupy.cumsum(keep, dtype=np.int64)))
        A._set_arrays(A.data[keep], A.indices[keep], kept_before[A.indptr].astype(A.index_dtype, copy=False))
        return
    if _on_cupyx(A):
        import cupyx.scipy.sparse as csp

        S = csp.csr_matrix((A.data.copy(), A.indices.copy(), A.indptr.copy()), shape=A.shape)
        getattr(S, method)()
        data, indices, indptr = S.data, S.indices, S.indptr
    else:
        import scipy.sparse as sp

        h = A.to_host()
        S = sp.csr_array((h.data.copy(), h.indices.copy(), h.indptr.copy()), shape=A.shape)
        getattr(S, method)()
        data, indices, indptr = S.data, S.indices, S.indptr
        if A.on_gpu:
            cupy = _device.require_cupy()
            data, indices, indptr = cupy.asarray(data), cupy.asarray(indices), cupy.asarray(indptr)
    A._set_arrays(data, indices.astype(A.index_dtype, copy=False), indptr.astype(A.index_dtype, copy=False))


def _rows_increase(A, strict: bool) -> bool:
    """Whether column indices increase along every row of a host matrix (the device's check is
    :func:`_learn_structure`'s pass)."""
    if A.nnz < 2:
        return True
    ind = A.indices
    row_start = np.zeros(A.nnz + 1, dtype=bool)
    row_start[A.indptr] = True  # indptr's entries lie in [0, nnz]
    ok = ind[1:] > ind[:-1] if strict else ind[1:] >= ind[:-1]
    return bool((ok | row_start[1:-1]).all())


def _known(M, fact: str):
    return M._known_longest_row() if fact == "longest-row" else M._known_flag(fact)


def _learn_structure(wanted, meanwhile=None):
    """Find the structure facts ``wanted`` ((device matrix, facts) pairs; facts among
    ``canonical``, ``sorted``, ``longest-row``) that are not known yet, and cache them on the
    matrices; returns ``meanwhile()``.

    Each matrix that lacks one gets one pass (kernels/csr_structure.cu), which finds all three;
    ``meanwhile`` (host work) runs while the passes do, then one host read brings every answer.
    """
    todo: list = []
    for M, facts in wanted:
        if any(M is queued for queued in todo) or all(_known(M, fact) is not None for fact in facts):
            continue
        if M.nnz == 0:
            M._remember_structure(sorted_rows=True, canonical=True, longest_row=0)
        else:
            todo.append(M)
    if not todo:
        return meanwhile() if meanwhile else None
    from .backends.cuda import csr_structure

    answer = csr_structure.answer_array(len(todo))
    for slot, M in enumerate(todo):
        csr_structure.queue_structure(M.indptr, M.indices, M.nnz, answer, slot)
    result = meanwhile() if meanwhile else None
    for M, found in zip(todo, answer.get().tolist()):
        descent, repeat = found[csr_structure.DESCENT], found[csr_structure.REPEAT]
        M._remember_structure(sorted_rows=not descent, canonical=not (descent or repeat),
                              longest_row=found[csr_structure.LONGEST_ROW])
    return result


def count_nonzero(A) -> int:
    """Nonzero values after adding up duplicates, as SciPy counts them."""
    S, _ = _library(A)
    return int(S.count_nonzero())


def has_sorted_indices(A) -> bool:
    if A.on_gpu:
        _learn_structure([(A, ("sorted",))])
        return bool(A._known_flag("sorted"))
    return _rows_increase(A, strict=False)


def has_canonical_format(A) -> bool:
    if A.on_gpu:
        _learn_structure([(A, ("canonical",))])
        return bool(A._known_flag("canonical"))
    return _rows_increase(A, strict=True)


# ------------------------------------------------------------------ NumPy protocol
def array_function(A, func, args, kwargs):
    """``np.dot``, ``np.shape`` and ``np.ndim`` on a CSRMatrix; NotImplemented for the rest."""
    if func is np.dot and len(args) == 2 and not kwargs:
        a, b = args
        return a @ b if isinstance(a, CSRMatrix) else rmatmul(b, a)
    if func is np.shape:
        return A.shape
    if func is np.ndim:
        return 2
    return NotImplemented
