"""What the kernels that run only on matrices of one structure share.

``dia`` (spla.planning.dia: entries on a few diagonals) and ``band``
(spla.planning.band: every row one contiguous run of columns) each read fewer
bytes than CSR by leaving out the column indices, which their structure makes
redundant. Each module offers the same three functions, which the SpMV
planner, the tuner, the tuning cache and the corpus scripts call through
:data:`spla.planning.spmv.STRUCTURES`:

``structure(A)``
    the structure's arrays, or a :class:`Refusal` saying why A has none; found
    once where A lives (NumPy or CuPy) and cached on A (:func:`cached`);
``applies(A, stats=None)``
    whether A has the structure (cheap tests on the row statistics first);
``auto_considers(stats)``
    whether ``auto`` looks for it in a matrix of these row statistics (from ``AUTO_MIN_ROWS``
    rows: a kernel that takes whole rows a thread leaves the GPU idle with fewer);
``describe(found)``
    a few words on a found structure (``spla info``: "5 diagonals").

Each also names what it needs in ``NEEDS`` (for ``kernel=...``'s error).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..device import array_module, free_device_memory, is_out_of_memory


@dataclass(frozen=True)
class Refusal:
    """Why a matrix has no structure of one kind (the text of ``kernel=...``'s error)."""

    reason: str


#: Why a matrix with a row whose columns do not strictly increase has neither structure (two
#: entries of one (row, column) would land in one slot).
NOT_CANONICAL = Refusal("its rows are not in canonical form (sorted, no duplicates): call A.sum_duplicates()")


#: Bytes a structure may take without asking the driver what is free (cudaMemGetInfo). Timed apart
#: on the H200 (session 33), the query took 30-55 us right after a fresh device copy and 11 us warm
#: (session 32's cProfile average, 1.1 ms, was not borne out); not asking below this took
#: 0.04-0.14 ms off each of four detections. Less than this that does not fit is caught as the
#: allocation's out-of-memory error (a Refusal, :func:`cached`).
UNASKED_BYTES = 1 << 30


def fits(xp, nbytes: int) -> bool:
    """Whether nbytes more fit where xp allocates (the host is not checked)."""
    return xp is np or nbytes <= UNASKED_BYTES or nbytes <= free_device_memory()


def cached(A, key: str, detect: Callable) -> object:
    """``detect(xp, A)`` once per matrix, cached on A under ``key``; running out of device memory
    while detecting is a Refusal (``auto`` must still run a CSR kernel)."""
    found = A._cache.get(key)
    if found is None:
        try:
            found = detect(array_module(A.indices), A)
        except Exception as exc:
            if not is_out_of_memory(exc):
                raise
            found = Refusal("device memory ran out while storing its structure")
        A._cache[key] = found
    return found


def distinct(values: np.ndarray) -> np.ndarray:
    """np.unique by a sort (dia's sampled diagonals, a palette's sampled bit patterns): NumPy 2's
    hashing unique took 320 us of a refusal's 478 us (4,096 sampled diagonals, on the H200's
    host, session 32); the sort leaves 187 us."""
    ordered = np.sort(values)
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))] if ordered.size else ordered
