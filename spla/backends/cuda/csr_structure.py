"""The structure pass of a device CSR matrix (kernels/csr_structure.cu): sorted rows, canonical
rows and the longest row, found together in one launch whose answer the caller reads back
once, for as many matrices as it queued.

:mod:`spla.csr_ops` asks it before a GPU SpGEMM of a matrix it knows nothing about yet and
caches the answer on the matrix.
"""

from __future__ import annotations

import functools

import numpy as np

from ... import device as _device
from .runtime import INDEX_TYPES, KernelSource, ceil_div, grid_1d, template

STRUCTURE_THREADS = 256
STRUCTURE_PER_THREAD = 16  # entries a thread compares: a block takes 4096 entries
STRUCTURE_SOURCE = KernelSource("csr_structure.cu", [
    template("spla_csr_structure", i, STRUCTURE_THREADS, STRUCTURE_PER_THREAD) for i in INDEX_TYPES])
# What each matrix's three slots of the answer hold
DESCENT, REPEAT, LONGEST_ROW = range(3)


@functools.cache
def _kernel(index_dtype: np.dtype, device_id: int):
    return STRUCTURE_SOURCE.function(template("spla_csr_structure", index_dtype, STRUCTURE_THREADS,
                                              STRUCTURE_PER_THREAD))


def answer_array(count: int):
    """Zeroed device room for ``count`` matrices' answers (count x 3 uint64)."""
    return _device.require_cupy().zeros((count, 3), dtype=np.uint64)


def queue_structure(indptr, indices, nnz: int, answer, slot: int) -> None:
    """Queue the pass over one matrix (``nnz`` > 0) into ``answer[slot]``: a descent found, a
    repeated column found, the longest row. No host synchronisation; read ``answer`` after."""
    cupy = _device.require_cupy()
    kernel = _kernel(np.dtype(indices.dtype), cupy.cuda.Device().id)
    blocks = grid_1d(ceil_div(nnz, STRUCTURE_PER_THREAD), STRUCTURE_THREADS)
    kernel((blocks,), (STRUCTURE_THREADS,),
           (indptr, indices, np.int64(indptr.shape[0] - 1), np.int64(nnz), answer[slot]))
