"""Diagonal (DIA) storage for SpMV on matrices whose entries lie on a few diagonals.

A stencil or banded matrix stores, in CSR, a column index beside every value:
half the bytes an SpMV reads in float32, a third in float64. When every entry
lies on one of a few diagonals (column - row taking at most
:data:`MAX_DIAGONALS` values) the indices carry no information: DIA keeps the
diagonals' offsets and, per diagonal, one value per row (zero where the row has
no entry there), and the kernel (kernels/spmv_dia.cu) computes each column
from its row. The bytes an SpMV reads drop to about ``values (1 + padding) +
x + y``: 2D Poisson in float32 reads 0.54x the CSR bytes.

The same products as CSR, bit for bit: a row's diagonals are taken in
increasing offset, which is the CSR row's column order, and padding is skipped
(a zero value means "no entry"), so a matrix that stores explicit zeros is
refused (CSR multiplies them, which shows when x holds an Inf or a NaN), and
so is one with duplicate entries.

Detection (:func:`structure`) runs where A lives, once per matrix (cached on A),
through :mod:`spla.csr_passes` (NumPy on the host, a kernel a pass on the GPU):
the diagonals of a random sample of entries give the candidates (one small
read), then one pass stores every entry's value on its candidate diagonal and
counts the entries on none, stored zeros and rows out of canonical order; the
diagonals of entries the sample missed are added (one more pass). Refused with
more than :data:`MAX_DIAGONALS` diagonals, when padding would exceed
:data:`MAX_FILL` of the nonzeros, with explicit zeros, or when the diagonals
would not fit in free device memory (auto then runs a CSR kernel); the reason
is kept for ``kernel="dia"``'s error.

A matrix whose stored values take few bit patterns (a stencil of constant coefficients: two or
three) runs the kernel's palette entry (:func:`palette`): a byte a slot in place of the value, the
values in a table of at most :data:`PALETTE_VALUES`, with the same products.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import csr_passes
from . import ceil_div, structured
from .palette import VALUES as PALETTE_VALUES
from .palette import Palette
from .palette import cached as cached_palette
from .stats import row_stats
from .structured import Refusal, distinct

__all__ = ["AUTO_MIN_ROWS", "NEEDS", "PALETTE_VALUES", "Palette", "Refusal", "Structure", "applies", "auto_considers",
           "describe", "kernel_slots", "palette", "rows_choices", "rows_for", "structure"]

#: What ``kernel="dia"`` asks of a matrix (its error's text).
NEEDS = "a matrix whose entries lie on a few diagonals"

#: Diagonals a matrix may have (a 3D 27-point stencil has 27, a full band of half-width 31 has 63);
#: the fill bound (MAX_FILL) decides whether storing them pays.
MAX_DIAGONALS = 64
#: Stored values (diagonals x rows) over nonzeros above which DIA reads more than it saves.
MAX_FILL = 1.3
#: Entries sampled for the candidate diagonals.
SAMPLE = 4096
#: Diagonals are looked for only where row lengths vary this little (coefficient of variation).
MAX_CV = 0.5
#: Rows a thread of the kernel may take (``dia:R``; kernels/spmv_dia.cu): R values of a diagonal are
#: one aligned load of at most 16 bytes, so float64 takes at most 2.
ROWS = (1, 2, 4)
#: Bytes of values a thread loads in one sweep of its diagonals (rows x diagonals x value size)
#: that :func:`rows_for` allows. Set on the H200 (session 14, ``ab-dia-call1``): 2D and 3D Poisson
#: (5 and 7 diagonals) ran fastest at the most rows (float32 R = 4: 80 and 112 bytes), a 27-point
#: stencil at R = 2 in float32 (216 bytes) and R = 1 in float64, a band of 33 diagonals at R = 1
#: (264 bytes at R = 2 in float32 was 2% slower).
THREAD_BYTES = 256
#: Threads the H200 holds at once (132 SMs x 2,048). Where the rows fit in one wave of this many
#: threads at some R up to twice :data:`THREAD_BYTES`' R, the fewest rows a thread that does is
#: taken: every row in flight at once, and as many threads (and loads) in flight as the rows allow.
#: Above the bytes' R this is a doubling where a nearly empty second wave would add one thread's
#: whole sweep of the diagonals to the time (session 14, call 3: a band of 33 diagonals, 303k rows,
#: 2.61x the lean cuSPARSE call at R = 1 and 3.18x at R = 2). Below it, matrices of fewer rows than
#: a wave take fewer rows a thread (session 16: the tuner's times at 300k and 2M nonzeros, every
#: stencil of the corpus and both dtypes: the bytes' R was 0.67-0.93 of the best R on 14 of 22, this
#: rule the best on all 22; a 27-point stencil of 74k rows 5.4 us at R = 1, 6.9 at R = 2).
RESIDENT_THREADS = 132 * 2048
#: Each diagonal's stored length is n_rows rounded up to this many rows (zeros past n_rows), so
#: every group of R rows starts aligned.
STRIDE_ROWS = 8


def rows_choices(dtype) -> tuple[int, ...]:
    """The rows a thread ``dia:R`` takes in this dtype (R values in at most 16 bytes)."""
    return tuple(r for r in ROWS if r * np.dtype(dtype).itemsize <= 16)


def rows_for(n_diagonals: int, dtype, n_rows: int | None = None) -> int:
    """Rows a thread for a matrix of ``n_diagonals`` diagonals and ``n_rows`` rows: the most (of
    :func:`rows_choices`) whose values of one sweep stay within :data:`THREAD_BYTES`; given
    ``n_rows``, the fewest up to twice that which fit the rows in one wave of
    :data:`RESIDENT_THREADS`, where any does."""
    size = np.dtype(dtype).itemsize
    choices = rows_choices(dtype)
    rows = max((r for r in choices if r * max(n_diagonals, 1) * size <= THREAD_BYTES), default=1)
    if n_rows is None:
        return rows
    one_wave = [r for r in choices if r <= 2 * rows and ceil_div(n_rows, r) <= RESIDENT_THREADS]
    return min(one_wave, default=rows)


@dataclass(eq=False)
class Structure:
    """A's diagonals: ``offsets`` (int64, increasing, on A's side) and ``values``
    (n_diagonals x ``stride``, A's dtype, zero where a row has no entry and past n_rows).
    ``values`` is None once a palette's codes hold them (:func:`palette`)."""

    offsets: Any
    values: Any
    n_diagonals: int

    def __post_init__(self):
        #: Values a diagonal stores: n_rows rounded up to :data:`STRIDE_ROWS`.
        self.stride = int(self.values.shape[1])
        #: Bytes of ``values``, kept once they are released.
        self.nbytes = int(self.values.nbytes)


#: The value types whose dia reads codes where the values fit a palette (the launcher reads it when
#: a matrix binds; scripts' A/B runs switch it).
PALETTE_DTYPES = ("float32", "float64")
#: Bytes a dia call touches (its values, x and y) from which the palette entry is taken: below it they
#: stay in L2 between calls, and reading a byte a slot instead of the value saves nothing. Fitted on the
#: corpus's 7- and 27-point stencils of 2-16M nonzeros in both dtypes (session 41, an H100, device time in
#: turns): the cut where the palette pays its detection (0.24-0.52 ms there) back within 100 calls is
#: 38 MB, every fit run on its side (values alone: 2 of 28 off). Reported on the 5-, 9- and 25-point
#: stencils: 39 of 42 runs on their side, the other three within 6 MB of it and each faster with the
#: palette, paying it back in 98-428 calls. 38 MB is three quarters of the 50 MB L2 of the H100 and the
#: H200; a GPU of another L2 size would move it (not measured).
PALETTE_MIN_BYTES = 38_000_000


def palette(A, found: Structure) -> Palette | None:
    """A's diagonals ``found`` as a :class:`~spla.planning.palette.Palette` (a slot's code is 0 where
    a row has no entry), or None where A's dtype is not in :data:`PALETTE_DTYPES`, a call touches
    fewer than :data:`PALETTE_MIN_BYTES`, its values take more than :data:`PALETTE_VALUES` bit
    patterns, or the codes do not fit (they are an optimisation: the values serve as well). Made
    once on A's side and cached on A: the launcher's choice, and what ``spla info`` reports.

    Once made, the codes are the diagonals' only values: ``found.values`` is released, which gives
    back 4 or 8 bytes a slot (a third of a 27-point stencil's device memory in float64), and the
    palette stays A's whatever the rule says later."""
    key = "dia-palette"
    values = found.values  # one read: another thread binding A may release them meanwhile
    if values is None:
        return A._cache[key]
    dtype = np.dtype(A.dtype).name
    touched = found.nbytes + (A.n_rows + A.n_cols) * values.itemsize  # the values, x and y
    if dtype not in PALETTE_DTYPES or touched < PALETTE_MIN_BYTES:
        return None
    coded = cached_palette(A, key, values)
    if coded is not None:
        found.values = None
    return coded


def kernel_slots(found: Structure, coded: Palette | None) -> tuple:
    """The slot arguments (values, palette, n_palette, codes) of the kernels that read A's
    diagonals by either entry (kernels/spmm_dia.cu, solver_cg_product.cu's dia entries): the values
    where ``coded`` is None, else the palette's table and codes. The entry not taken leaves its own
    arguments unread, so any device pointers fill them."""
    if coded is None:
        return found.values, found.values, np.int32(0), found.offsets
    return coded.table, coded.table, np.int32(coded.table.size), coded.codes


def describe(found: Structure) -> str:
    """What ``spla info`` says of A's structure."""
    return f"{found.n_diagonals} diagonals"


def structure(A) -> Structure | Refusal:
    """A's DIA structure, or why it has none (cached on A; see the module's notes)."""
    return structured.cached(A, "dia", _detect)  # type: ignore[return-value]


def _detect(xp, A) -> Structure | Refusal:
    capacity = A.nnz // MAX_DIAGONALS  # missed entries beyond these are a refusal
    needed = int(MAX_FILL * A.nnz * np.dtype(A.dtype).itemsize + 8 * capacity)  # the values, the missed diagonals
    if not structured.fits(xp, needed):
        return Refusal(f"its diagonals ({needed / 2**30:.1f} GiB) do not fit in free device memory")
    n_rows, nnz = A.n_rows, A.nnz
    if nnz == 0 or n_rows == 0:  # no diagonals: the kernel writes beta * y
        return Structure(offsets=xp.zeros(0, dtype=xp.int64), values=xp.zeros((0, _stride(n_rows)), dtype=A.dtype),
                         n_diagonals=0)
    # random entries, not a stride: a stride sharing a factor with the row length sees only some
    # of a band's diagonals (every third of 33 at a stride of 9,765)
    sample = (np.arange(nnz) if nnz <= SAMPLE  # small: every entry (two could sample one twice)
              else np.random.default_rng(0).integers(0, nnz, size=SAMPLE))
    # the sample's diagonals from its own entries first: a matrix whose sample already lies on too
    # many (a mesh, a road network: most that auto asks about) is refused before any pass over all
    # of its entries (the canonical-form check included)
    candidates = distinct(csr_passes.sampled_diagonals(A, sample))
    stride = _stride(n_rows)
    for _ in range(2):  # the sample's diagonals, then with those of the entries it missed
        refusal = _too_many(candidates, n_rows, nnz)
        if refusal is not None:
            return refusal
        values = xp.zeros(candidates.size * stride, dtype=A.dtype)
        found = csr_passes.check_diagonals(A, candidates, values, capacity)
        if not found.canonical:  # two entries of one (row, column) would land in one slot
            return structured.NOT_CANONICAL
        if found.zeros:
            return Refusal(f"it stores {found.zeros:,} explicit zeros (DIA skips zeros, CSR multiplies them)")
        if not found.missed:
            return Structure(offsets=xp.asarray(candidates), values=values.reshape(candidates.size, stride),
                             n_diagonals=int(candidates.size))
        if found.missed > capacity:  # a diagonal this full would have been sampled
            return Refusal(f"{found.missed:,} of its entries lie off the {candidates.size} diagonals a sample finds")
        candidates = distinct(np.concatenate((candidates, found.missed_diagonals)))
    # the second pass covers every entry by construction
    raise AssertionError("DIA detection: entries off their own diagonals")


def _stride(n_rows: int) -> int:
    return ceil_div(n_rows, STRIDE_ROWS) * STRIDE_ROWS


def _too_many(candidates: np.ndarray, n_rows: int, nnz: int) -> Refusal | None:
    if candidates.size > MAX_DIAGONALS:
        return Refusal(f"its entries lie on more than {MAX_DIAGONALS} diagonals")
    if candidates.size * n_rows > MAX_FILL * nnz:
        return Refusal(f"its {candidates.size} diagonals would store {candidates.size * n_rows / nnz:.2f}x its "
                       f"nonzeros (at most {MAX_FILL})")
    return None


def worth_detecting(stats) -> bool:
    """Whether rows of these statistics could lie on few diagonals: none longer than
    :data:`MAX_DIAGONALS`, and regular (the detection pass is not spent on graphs)."""
    return stats.max <= MAX_DIAGONALS and stats.cv <= MAX_CV


#: ``auto`` looks for diagonals from this many rows, at any size (until session 28: from 2^20
#: nonzeros, set from the design and never measured below). A thread takes whole rows, so with
#: fewer rows dia leaves the GPU idle: on the corpus's stencils and bands at 300k-1M nonzeros it ran
#: 0.51-0.71 of the best CSR kernel at 9,000-12,000 rows and 1.02-1.38x from about 41,000 (the
#: midpoint of the last mixed record, 39,304 rows, and the first won in both dtypes, 42,875);
#: held on held-out set 24 (session 31: 16/16 runs at least today's pick, 1.257x geomean), taken
#: once the detection cost at most 2 ms a matrix on the GPU (session 32: 0.8-1.4 ms with
#: kernels/detect_structure.cu; docs/lab/h200-2026-12-05-session32).
AUTO_MIN_ROWS = 41_000


def auto_considers(stats) -> bool:
    """Whether ``auto`` looks for diagonals in a matrix of these row statistics: rows enough
    (:data:`AUTO_MIN_ROWS`), and :func:`worth_detecting`."""
    return stats.n_rows >= AUTO_MIN_ROWS and worth_detecting(stats)


def applies(A, stats=None) -> bool:
    """Whether A's entries lie on a few diagonals: its row statistics (``stats``, or A's) are
    :func:`worth_detecting` and the detection pass, run only then and once, finds them."""
    return worth_detecting(row_stats(A) if stats is None else stats) and isinstance(structure(A), Structure)
