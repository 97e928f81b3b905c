"""The GPU side of spla's smoothed-aggregation set-up (:mod:`spla.linalg._amg_setup`).

:class:`DeviceSetupOps` implements the interface of
:class:`spla.linalg._amg_setup.HostSetupOps` on CuPy arrays and
``cupyx.scipy.sparse`` matrices: the per-row passes (diagonal, strength graph,
the prolongation smoother's values), the graph steps of the MIS(2) aggregation
and the fused Lanczos steps as raw kernels (kernels/amg_setup.cu), sparse
products through cuSPARSE's SpGEMM with the memory they need checked first,
CUDA events for the step timings (no host synchronisation between steps), and
:meth:`DeviceSetupOps.read`, the one door through which the set-up copies values
to the host (counted). :func:`jacobi_correct_kernel` is the cycle's fused
Jacobi sweep.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ... import device as _device
from ...csr_passes import entry_rows
from ...errors import InputError
from ...linalg._amg_setup import SPGEMM_MAX_PRODUCTS
from .runtime import INDEX_TYPES, KernelSource, ceil_div, grid_1d, template
from .solvers import SOLVER_BLOCK, SOLVER_DEFINES

AMG_BLOCK = 256
_ROW_KERNELS = ("spla_amg_diagonal", "spla_amg_strong_count", "spla_amg_strong_fill", "spla_amg_jacobi_operator",
                "spla_amg_row_count", "spla_amg_row_max", "spla_amg_mis_round", "spla_amg_join",
                "spla_amg_row_summary")
AMG_SETUP_SOURCE = KernelSource(
    "amg_setup.cu",
    [template(name, i) for name in _ROW_KERNELS for i in INDEX_TYPES]
    + [template("spla_amg_dot", False), template("spla_amg_dot", True), "spla_amg_lanczos_orthogonalize",
       "spla_amg_lanczos_normalize", "spla_amg_priorities", "spla_amg_start_vector"],
    SOLVER_DEFINES)


class DeviceSetupOps:
    """CuPy/cupyx versions of the set-up's side operations."""

    on_gpu = True

    def __init__(self):
        self.xp = _device.require_cupy()
        import cupyx.scipy.sparse as csp

        self._csp = csp
        self.reads = 0
        self._reduction_grid = 8 * self.xp.cuda.Device().attributes["MultiProcessorCount"]
        self._partials = self.xp.empty(self._reduction_grid, dtype=self.xp.float64)
        self._counter = self.xp.zeros(1, dtype=self.xp.uint32)

    def read(self, value) -> np.ndarray:
        """value (a device array) on the host: the set-up's only deliberate device-to-host copy."""
        self.reads += 1
        return value.get()

    # ------------------------------------------------------------ row passes
    def _rows(self, name: str, A, *args):
        """A thread-per-row kernel over the CSR structure of A (a cupyx matrix or a strength graph)."""
        n = A.indptr.shape[0] - 1
        kernel = AMG_SETUP_SOURCE.function(template(name, A.indices.dtype))
        kernel((grid_1d(n, AMG_BLOCK),), (AMG_BLOCK,), (A.indptr, A.indices, *args, np.int64(n)))

    def row_ids(self, indptr, nnz: int):
        """The row of each stored entry."""
        return entry_rows(indptr, self.xp.arange(nnz, dtype=indptr.dtype))

    def diagonal(self, A):
        out = self.xp.empty(A.shape[0], dtype=self.xp.float64)
        self._rows("spla_amg_diagonal", A, A.data, out)
        return out

    def strong_counts(self, A, diagonal, theta: float, negligible: float):
        counts = self.xp.empty(A.shape[0], dtype=self.xp.int64)
        self._rows("spla_amg_strong_count", A, A.data, diagonal, np.float64(theta), np.float64(negligible), counts)
        return counts

    def strong_columns(self, A, diagonal, theta: float, negligible: float, graph_indptr, nnz: int):
        out = self.xp.empty(nnz, dtype=A.indices.dtype)
        self._rows("spla_amg_strong_fill", A, A.data, diagonal, np.float64(theta), np.float64(negligible),
                   graph_indptr, out)
        return out

    def jacobi_operator_values(self, A, diagonal, weight: float):
        out = self.xp.empty(A.nnz, dtype=self.xp.float64)
        self._rows("spla_amg_jacobi_operator", A, A.data, diagonal, np.float64(weight), out)
        return out

    def segment_sum(self, segments, values, count: int):
        """out[k] = sum of values[i] with segments[i] == k (atomic adds: CuPy's bincount reads the
        largest segment back to the host to size its output)."""
        import cupyx

        out = self.xp.zeros(count, dtype=values.dtype)
        cupyx.scatter_add(out, segments, values)
        return out

    def row_count(self, graph, mask):
        out = self.xp.empty(graph.n, dtype=self.xp.int64)
        self._rows("spla_amg_row_count", graph, mask, out)
        return out

    # ------------------------------------------------------------ graph steps
    def row_max(self, graph, keys):
        out = self.xp.empty_like(keys)
        self._rows("spla_amg_row_max", graph, keys, out)
        return out

    def mis_round(self, graph, near, keys, flags, round_index: int, state_shift: int):
        out = self.xp.empty_like(keys)
        self._rows("spla_amg_mis_round", graph, keys, near, out, flags[round_index:round_index + 1],
                   np.int32(state_shift))
        return out

    def join(self, graph, owner, priorities, sources):
        out = self.xp.empty_like(owner)
        self._rows("spla_amg_join", graph, owner, priorities, sources, out)
        return out

    def _hash(self, name: str, n: int, dtype, offset: int):
        out = self.xp.empty(n, dtype=dtype)
        AMG_SETUP_SOURCE.function(name)((grid_1d(n, AMG_BLOCK),), (AMG_BLOCK,), (out, np.int64(n), np.uint64(offset)))
        return out

    def priorities(self, n: int, offset: int):
        return self._hash("spla_amg_priorities", n, self.xp.int64, offset)

    def start_vector(self, n: int, offset: int):
        return self._hash("spla_amg_start_vector", n, self.xp.float64, offset)

    # ------------------------------------------------------------ Lanczos steps (scalars stay on the device)
    def _reduce(self, name: str, n: int, args):
        grid = max(1, min(ceil_div(max(n, 1), SOLVER_BLOCK), self._reduction_grid))
        AMG_SETUP_SOURCE.function(name)((grid,), (SOLVER_BLOCK,), args)

    def dot(self, a, b, scalars, slot: int, weight=None):
        """scalars[slot] = a . b (weighted: sum a b weight)."""
        n = a.shape[0]
        name = template("spla_amg_dot", weight is not None)
        self._reduce(name, n, (a, b, weight if weight is not None else a, np.int64(n), self._partials,
                               self._counter, scalars, np.int32(slot)))

    def lanczos_orthogonalize(self, u, dinv, d, v, p, scalars, alpha_slot: int, beta_slot: int, out_slot: int):
        """w = D^-1 u - alpha v - beta p; scalars[out_slot] = w . D w."""
        n = u.shape[0]
        w = self.xp.empty_like(u)
        self._reduce("spla_amg_lanczos_orthogonalize", n,
                     (u, dinv, d, v, p, w, np.int64(n), self._partials, self._counter, scalars,
                      np.int32(alpha_slot), np.int32(beta_slot), np.int32(out_slot)))
        return w

    def lanczos_normalize(self, w, scalars, slot: int):
        """w / sqrt(scalars[slot])."""
        n = w.shape[0]
        v = self.xp.empty_like(w)
        kernel = AMG_SETUP_SOURCE.function("spla_amg_lanczos_normalize")
        kernel((grid_1d(n, AMG_BLOCK),), (AMG_BLOCK,), (w, v, np.int64(n), scalars, np.int32(slot)))
        return v

    # ------------------------------------------------------------ sparse matrices
    def library(self, data, indices, indptr, shape, canonical: bool):
        """A cupyx csr_matrix over the arrays (shared, not copied)."""
        M = self._csp.csr_matrix((data, indices, indptr), shape=shape)
        if canonical:  # known sorted and duplicate-free: spares cupyx's check before each product
            M.has_canonical_format = True
        return M

    @staticmethod
    def _needed_bytes(A, products: int) -> int:
        """cuSPARSE holds the products, the result and its work buffers, each up to that size."""
        entry = np.dtype(A.dtype).itemsize + np.dtype(A.indices.dtype).itemsize
        return 3 * products * entry + 2 * (A.shape[0] + 1) * 8

    def bound_suffices(self, products: int, A) -> bool:
        """Whether an upper bound on a product's intermediate products passes :meth:`product`'s
        checks with room to spare (half the free memory), so the exact count need not be read."""
        return (products <= SPGEMM_MAX_PRODUCTS
                and self._needed_bytes(A, products) <= _device.free_device_memory() // 2)

    def product(self, A, B, what: str, products: int):
        """A @ B through cuSPARSE's SpGEMM, after checking that its ``products`` intermediate
        products (counted by the caller) fit on the device.

        Raises :class:`spla.DeviceMemoryError` (sizes in the message) when it would not fit, and
        :class:`InputError` when the product count passes cuSPARSE's 32-bit counters; either
        way before anything is allocated, never a truncated product.
        """
        if products > SPGEMM_MAX_PRODUCTS:
            raise InputError(f"the AMG {what} has {products:,} intermediate products, more than cuSPARSE's "
                             f"32-bit SpGEMM counts; set up on the host (spla.linalg.amg(A.to_host()))")
        _device.check_fits(self._needed_bytes(A, products), f"AMG {what}")
        with _device.device_memory_errors(f"AMG {what}"):
            C = A @ B
        C.has_canonical_format = True  # cuSPARSE's SpGEMM writes sorted, duplicate-free rows
        return C

    def transpose(self, A):
        with _device.device_memory_errors("AMG restriction"):
            T = A.T.tocsr()
        T.has_canonical_format = True  # cuSPARSE's csr2csc sorts each row of the transpose
        return T

    # ------------------------------------------------------------ row statistics for the SpMV plans
    def row_length_summaries(self, indptrs) -> list:
        """(std, longest, empty rows) of each matrix's row lengths: one pass each on the device
        (spla_amg_row_summary: exact integer sums), one read for all."""
        cupy = self.xp
        sums = cupy.zeros((len(indptrs), 4), dtype=cupy.uint64)
        for k, indptr in enumerate(indptrs):
            n = indptr.shape[0] - 1
            kernel = AMG_SETUP_SOURCE.function(template("spla_amg_row_summary", indptr.dtype))
            kernel((min(grid_1d(n, AMG_BLOCK), self._reduction_grid),), (AMG_BLOCK,), (indptr, np.int64(n), sums[k]))
        summaries = []
        for (total, squares, longest, empty), indptr in zip(self.read(sums).tolist(), indptrs, strict=True):
            n = indptr.shape[0] - 1
            variance = (n * squares - total * total) / (n * n) if n else 0.0  # exact integers, one rounding
            summaries.append((math.sqrt(variance), longest, empty))
        return summaries

    # ------------------------------------------------------------ timing
    def mark(self):
        event = self.xp.cuda.Event()
        event.record()
        return event

    def elapsed(self, start, end) -> float:
        end.synchronize()
        return self.xp.cuda.get_elapsed_time(start, end) / 1e3

    def synchronize(self):
        self.xp.cuda.get_current_stream().synchronize()


@functools.cache
def jacobi_correct_kernel():
    """``kernel(b, Ax, scaled_dinv, x)``: the cycle's Jacobi sweep ``x += scaled_dinv * (b - A x)`` in one
    pass over the vectors, given ``A x`` (float32 or float64)."""
    cupy = _device.require_cupy()
    return cupy.ElementwiseKernel("T b, T ax, T scaled_dinv", "T x", "x += scaled_dinv * (b - ax)",
                                  "spla_amg_jacobi_correct")
