"""The schedules of equal tiles of nonzeros: segmented (a warp a tile) and staged (a block a tile).

``kernels/spmv_segmented.cu`` cuts the nonzeros into tiles of ``32 * K``
entries (K entries per lane), ``kernels/spmv_staged.cu`` into tiles of
``STAGED_THREADS * T`` (T entries a thread); neither needs a row plan, only
which rows each tile owns. Rows cut by tile edges are finished by the last of
their tiles (segmented) or by a second launch over the cut rows (staged).
"""

from __future__ import annotations

import numpy as np

from .. import csr_passes
from ..device import array_module
from ..errors import InputError
from . import ceil_div, palette
from .stats import host_indptr

# Entries per lane (a tile is 32 * K nonzeros, K a multiple of 4). A lane holds
# its K values, indices and products in registers: past SEGMENTED_LANE_BYTES of
# values (float64 at K = 16) they spill, so each dtype takes the K that fit.
SEGMENTED_ENTRIES = (4, 8, 16)
SEGMENTED_LANE_BYTES = 64
# The kernel's block: 8 warps, one tile each (passed to it as a -D define).
SEGMENTED_THREADS = 256
SEGMENTED_WARPS = SEGMENTED_THREADS // 32

# Nonzeros a thread of the staged kernel loads (its products wait in shared memory, not
# registers), and its block, one tile a block. A tile's products take STAGED_THREADS * T
# values of shared memory; past STAGED_TILE_BYTES (float64 at T = 16: 32 KiB a block) the L1
# left for x is too small (2x slower on a 40M power law, session 17), so the default T of each
# dtype, and the tuner's, keep within it.
STAGED_ENTRIES = (4, 8, 16)
STAGED_TILE_BYTES = 16384
STAGED_THREADS = 256
# A thread of the staged kernel sums a row of at most this many products in its tile, a warp a
# longer one (kernels/spmv_staged.cu's LONG, passed as -DSPLA_STAGED_THREAD_ROW; 128 since
# session 24). Auto's local_near gate reads it too.
STAGED_THREAD_ROW = 128
# ... and a larger T pays only while the tiles fill the GPU: the default takes the largest T
# whose tiles number at least this, two waves of resident blocks (132 SMs x 8 on an H200).
# scripts/fit_staged.py on the tuner's timings of every T (session 17: the 2M, 10M and 40M
# irregular matrices) scores the fit half the same (0.994 of the best T, geomean) anywhere
# from about 980 to 4,860 tiles (the records' counts on either side); this value is in that
# stretch, set from the GPU rather than threaded between two records (report half 0.995 /
# 0.999 in float32 / float64, where the largest T always read 0.972 / 0.992).
STAGED_MIN_TILES = 2 * 132 * 8
# Where the tiles cut at most this many rows, the staged kernel adds their partial sums itself (a
# counter a cut row: one launch a call) instead of leaving them to its finish kernel (a second
# launch, about 5 us of host time a call). Measured in turns (session 25, ab_one_launch.py in
# docs/lab/h200-2026-12-04-session25): up to 841 cut rows one launch was 1.08-1.21x faster by
# device time and 1.6-1.9x a call; from 2,087 cut rows 5-8% slower by device time (the fence and
# counter a cut row, which cost 11-15% at 40M). Between the two nothing was measured.
STAGED_ONE_LAUNCH_CUT = 1024
# Where every tile's columns span fewer than NARROW_SPAN, staged reads each nonzero's column as a
# 2-byte offset from its tile's smallest column (kernels/spmv_staged.cu, spla_spmv_staged_narrow):
# 6 bytes a float32 nonzero instead of 8. STAGED_NARROW: the value dtypes that do, read when a
# matrix binds staged. float32 only: on session 26's large matrices that fit it was 1.01-1.17x
# faster by device time in float32, 0.94-1.11x in float64 (10 instead of 12 bytes; slower on kNN
# windows, where the gathers of x decide), docs/lab/h200-2026-12-05-session26.
NARROW_SPAN = 1 << 16
STAGED_NARROW = ("float32",)
# The value types whose staged reads a matrix of one value once, not once a nonzero (its
# _uniform entries; spla.csr_passes.uniform_values). On the GPU the large gathers wait on L2
# sectors, of which a value takes 4 or 8 bytes a nonzero (session 34's G1-G2 for the figures).
STAGED_UNIFORM = ("float32", "float64")
# The value types whose staged reads a byte a nonzero where A's values take at most 255 bit patterns
# (its _palette entries; spla.planning.palette), and the bytes a call touches (values, indices, x and
# y) from which it does. Measured on an H100 (session 41, palette twins of corpus matrices, device time
# in turns): in float64 the palette ran 1.05-1.20x the values' entry from 10M nonzeros (120 MB
# touched; its detection, 0.2-0.7 ms, paid back within 8-60 calls) and 1.00x at 4M (52-56 MB); in
# float32 1.00-1.10x at 40M (geomean 1.03), paying back within 100 calls on 3 of 6 matrices, so
# float32 reads its values (the switch stays for A/B runs). The 90 MB cut, midway between those two
# sizes, was then checked on three other families at 6-16M: 7 of 9 runs on the side where the palette
# pays its detection back within 100 calls, the other two within 14 MB of the cut (call 6).
STAGED_PALETTE = ("float64",)
STAGED_PALETTE_MIN_BYTES = 90_000_000


def staged_in_one_launch(n_cut: int) -> bool:
    """Whether staged adds the partial sums of ``n_cut`` cut rows in its own kernel (one launch),
    not in its finish kernel: the launcher's choice, and what ``spla info`` reports."""
    return n_cut <= STAGED_ONE_LAUNCH_CUT


def staged_entries(dtype) -> tuple:
    """The T values of ``staged:T`` the default and the tuner take for one value dtype."""
    return tuple(t for t in STAGED_ENTRIES if STAGED_THREADS * t * np.dtype(dtype).itemsize <= STAGED_TILE_BYTES)


def staged_default(dtype, nnz: int, min_tiles: float = STAGED_MIN_TILES) -> int:
    """T of plain ``"staged"`` on ``nnz`` nonzeros: the largest of :func:`staged_entries` whose
    tiles number at least ``min_tiles`` (16 in float32 and 8 in float64 from about 8.7M and
    4.3M nonzeros), else the smallest."""
    choices = sorted(staged_entries(dtype), reverse=True)
    return next((t for t in choices if nnz >= min_tiles * STAGED_THREADS * t), choices[-1])


def segmented_entries(dtype) -> tuple:
    """The K values ``segmented:K`` takes for one value dtype."""
    return tuple(k for k in SEGMENTED_ENTRIES if k * np.dtype(dtype).itemsize <= SEGMENTED_LANE_BYTES)


def segmented_default(dtype) -> int:
    """K of plain ``"segmented"``: the largest that dtype takes (16 float32, 8 float64)."""
    return max(segmented_entries(dtype))


def segmented_tile_rows(A, tile: int) -> np.ndarray:
    """Row ownership of ``kernels/spmv_segmented.cu``'s nonzero tiles, cached on A.

    Tile ``t`` covers nonzeros ``[t * tile, (t + 1) * tile)`` and owns the rows
    that start in it: rows ``tile_rows[t] .. tile_rows[t + 1] - 1``. The last
    tile also owns trailing empty rows, and a matrix without nonzeros still has
    one tile (it writes the empty rows). Returns int64 ``tile_rows`` of length
    ``n_tiles + 1`` ending in ``n_rows``.
    """
    if tile < 1:
        raise InputError(f"tile must be >= 1, got {tile}")
    key = ("segmented-tile-rows", tile)
    if key not in A._cache:
        indptr = host_indptr(A)
        n_tiles = max(1, ceil_div(int(indptr[-1]), tile))
        tile_rows = np.empty(n_tiles + 1, dtype=np.int64)
        tile_rows[:-1] = np.searchsorted(indptr[:-1], np.arange(n_tiles, dtype=np.int64) * tile, side="left")
        tile_rows[-1] = indptr.size - 1
        A._cache[key] = tile_rows
    return A._cache[key]


def segmented_end_bits(A, tile: int) -> np.ndarray:
    """Where the rows of a matrix without empty rows end, as ``kernels/spmv_segmented.cu``'s
    bitmap path reads them, cached on A: uint32 words, bit i of word w set where nonzero
    32 w + i is the last of its row, padded to whole tiles (``tile / 32`` words a tile).

    Built once here, the bits spare every call's tiles the walk over their rows' offsets (on
    rows of 2-16 over an x that stays in L1 that walk cost segmented up to a fifth of its time;
    BENCHMARKS.md, session 22). nnz / 8 bytes on the device. Raises
    :class:`InputError` for an empty row (it has no last nonzero: those matrices walk).
    """
    if tile < 128 or tile % 128:
        raise InputError(f"tile must be a positive multiple of 128 (whole 16-byte loads of words), got {tile}")
    key = ("segmented-end-bits", tile)
    if key not in A._cache:
        indptr = host_indptr(A)
        if indptr.size > 1 and int(np.diff(indptr).min()) == 0:
            raise InputError("a row is empty: segmented finds these matrices' row ends by walking their offsets")
        n_tiles = max(1, ceil_div(int(indptr[-1]), tile))
        words = np.zeros(n_tiles * (tile // 32), dtype=np.uint32)
        last = indptr[1:] - 1  # sorted and distinct: no row is empty
        if last.size:
            word = last >> 5
            bits = np.left_shift(np.uint32(1), (last & 31).astype(np.uint32))
            firsts = np.flatnonzero(np.r_[True, word[1:] != word[:-1]])  # the first end in each word
            words[word[firsts]] = np.bitwise_or.reduceat(bits, firsts)
        A._cache[key] = words
    return A._cache[key]


def staged_cut_rows(A, tile: int) -> np.ndarray:
    """The rows that ``kernels/spmv_staged.cu``'s tiles of ``tile`` nonzeros cut, cached on A:
    int64 rows of (row, first tile, last tile), for its finish kernel."""
    key = ("staged-cut-rows", tile)
    if key not in A._cache:
        indptr = host_indptr(A)
        starts, ends = indptr[:-1], indptr[1:]
        rows = np.flatnonzero((ends > starts) & (starts // tile != (ends - 1) // tile))
        A._cache[key] = np.stack([rows, starts[rows] // tile, (ends[rows] - 1) // tile], axis=1).astype(np.int64)
    return A._cache[key]


def narrow_columns(indices, tile: int):
    """(offsets, tile_cols) where every tile of ``tile`` nonzeros spans fewer than NARROW_SPAN
    columns, else None: tile t's smallest column in ``tile_cols[t]`` (the indices' dtype) and each
    nonzero's column less it as uint16, on the indices' side (NumPy or CuPy)."""
    xp = array_module(indices)
    nnz = int(indices.size)
    if nnz == 0:
        return None
    n_full = nnz // tile
    pieces = [indices[:n_full * tile].reshape(n_full, tile)] if n_full else []
    if nnz > n_full * tile:
        pieces.append(indices[n_full * tile:].reshape(1, -1))
    lows = [piece.min(axis=1) for piece in pieces]
    if max(int((piece.max(axis=1) - low).max()) for piece, low in zip(pieces, lows)) >= NARROW_SPAN:
        return None
    offsets = xp.concatenate([(piece - low[:, None]).astype(xp.uint16).ravel() for piece, low in zip(pieces, lows)])
    return offsets, xp.concatenate(lows).astype(indices.dtype)


def staged_narrow_columns(A, T: int):
    """What ``staged:T`` reads in place of A's indices (:func:`narrow_columns` over its tiles), made
    once per (matrix, T) on A's side and cached on A: the launcher's choice, and what ``spla info``
    reports. None where A's dtype does not read them (STAGED_NARROW), a tile spans too many
    columns, or there is no memory for them (they are an optimisation: the indices serve as well)."""
    if np.dtype(A.dtype).name not in STAGED_NARROW:
        return None
    key = ("staged-narrow", T)
    if key not in A._cache:
        try:
            A._cache[key] = narrow_columns(A.indices, STAGED_THREADS * T)
        except MemoryError:  # CuPy's OutOfMemoryError is one
            A._cache[key] = None
    return A._cache[key]


def staged_uniform(A) -> bool:
    """Whether ``staged`` reads A's one value once (its _uniform entries): A's dtype is in
    STAGED_UNIFORM and every stored value has one bit pattern. The launcher's choice, and what
    ``spla info`` reports."""
    return csr_passes.uniform_values(A, STAGED_UNIFORM)


def staged_palette(A) -> palette.Palette | None:
    """A's values as a palette (a byte a nonzero into a table of at most 255) for staged's _palette
    entries, or None: A's dtype is not in STAGED_PALETTE, a call touches fewer than
    STAGED_PALETTE_MIN_BYTES, A stores one value (the _uniform entries read none), its values take
    more than 255 bit patterns, or the codes do not fit. Found once where A lives and cached on A:
    the launcher's choice, and what ``spla info`` reports."""
    dtype = np.dtype(A.dtype)
    touched = A.data.nbytes + A.indices.nbytes + (A.n_rows + A.n_cols) * dtype.itemsize
    if dtype.name not in STAGED_PALETTE or touched < STAGED_PALETTE_MIN_BYTES or staged_uniform(A):
        return None
    return palette.cached(A, "staged-palette", A.data)


def segmented_summary(A, tile: int, kernel: str = "segmented") -> dict:
    """How ``kernels/spmv_segmented.cu`` (or ``kernel="staged"``, ``kernels/spmv_staged.cu``)
    splits A into tiles of ``tile`` nonzeros.

    A tile's work is its nonzeros plus the rows it owns (it writes them, and
    walks them to find where they end unless the plan has segmented's end bits:
    a matrix without empty rows); ``cut_rows`` cross a tile edge (staged adds their parts
    through a counter a row in its kernel, or in its finish kernel past
    STAGED_ONE_LAUNCH_CUT), and ``counted_rows`` touch three or more tiles
    (segmented's partial sums meet through a counter).
    """
    tile_rows = segmented_tile_rows(A, tile)
    indptr = host_indptr(A)
    n_tiles = tile_rows.size - 1
    nnz = int(indptr[-1])
    work = np.clip(nnz - np.arange(n_tiles, dtype=np.int64) * tile, 0, tile) + np.diff(tile_rows)
    starts, ends = indptr[:-1], indptr[1:]
    busy = ends > starts
    touched = (ends[busy] - 1) // tile - starts[busy] // tile + 1
    mean = float(work.mean())
    return {"kernel": kernel, "tile": tile, "tiles": int(n_tiles), "tile_work_max": int(work.max()),
            "tile_work_mean": mean, "imbalance": float(work.max()) / mean if mean > 0 else 1.0,
            "cut_rows": int(np.count_nonzero(touched >= 2)), "counted_rows": int(np.count_nonzero(touched >= 3))}
