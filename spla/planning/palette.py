"""A palette of stored values: a matrix whose values take at most :data:`VALUES` bit patterns (a
stencil of constant coefficients takes two or three, a graph Laplacian one a degree, an adjacency of
small integer weights a few) is read as a byte a value, a code into a table of those patterns that
each block of the kernel keeps in shared memory. The products are the values' own, so the bits are
the same; the bytes a product reads drop by 3 (float32) or 7 (float64).

dia codes its diagonals' slots (:func:`spla.planning.dia.palette`) and staged a CSR matrix's values
(:func:`spla.planning.segmented.staged_palette`); each decides where a palette pays. :func:`cached`
is the detection both call (:func:`find`, where the values live, once a matrix).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import csr_passes
from ..device import array_module, to_host
from .structured import distinct

__all__ = ["VALUES", "Palette", "cached", "find"]

#: Distinct nonzero bit patterns a palette holds: a code is a byte, and code 0 is the table's 0.
VALUES = 255
#: Values whose bit patterns make the first table: every (size / SAMPLE)-th.
SAMPLE = 4096
#: Values off the table whose bits a pass of the detection keeps, and the passes it makes.
MISSED = 1 << 16
PASSES = 3


@dataclass(frozen=True, eq=False)
class Palette:
    """Values as codes: ``codes`` (uint8, the values' shape: each value's place in ``table``) and
    ``table`` (the values' dtype, sorted as unsigned bit patterns: ``table[0]`` zero, then each
    other stored pattern once, at most :data:`VALUES`), on the values' side."""

    codes: Any
    table: Any

    @property
    def n_values(self) -> int:
        return int(self.table.size) - 1


def find(values) -> Palette | None:
    """``values`` as a :class:`Palette`, or None where they take more than :data:`VALUES` nonzero bit
    patterns (or none at all). A strided sample's patterns, with 0, make the table (one small read; more than
    VALUES refuses at once). One pass (csr_passes.palette_codes: on the GPU a launch and a read)
    codes every value on it and keeps the bits of up to MISSED values off it; where there are any,
    those join the table and the pass runs again, at most PASSES in all. A strided sample, not a
    random one: no positions to draw and send, and a value it misses costs a pass, not a wrong code
    (session 41: drawing and sending a random sample's positions, and building the table twice, took
    0.15 ms of the detection's 0.43)."""
    xp = array_module(values)
    if values.size == 0:
        return None
    unsigned = np.dtype(f"u{values.dtype.itemsize}")
    patterns = np.asarray(to_host(values.reshape(-1)[::max(1, values.size // SAMPLE)])).view(unsigned)
    for _ in range(PASSES):
        patterns = distinct(np.concatenate([np.zeros(1, dtype=unsigned), patterns]))  # 0 first
        if patterns.size > VALUES + 1:
            return None
        table = xp.asarray(patterns).view(values.dtype)
        coded = csr_passes.palette_codes(values, table, MISSED)
        if coded.missed == 0:
            return Palette(codes=coded.codes, table=table)
        patterns = np.concatenate([patterns, coded.missed_bits])
    return None  # values off the table kept coming past what a pass keeps


def cached(A, key: str, values) -> Palette | None:
    """:func:`find` on ``values`` once a matrix, cached on A under ``key``. Running out of device memory
    is no palette: the codes are an optimisation, and the values serve as well."""
    if key not in A._cache:
        try:
            A._cache[key] = find(values)
        except MemoryError:  # CuPy's OutOfMemoryError is one
            A._cache[key] = None
    return A._cache[key]
