"""Rotated value loads: where the band and rle kernels take a row's value loads in a rotated order.

band and rle (kernels/spmv_band.cu, kernels/spmv_rle.cu) map rows as warp does, ``lanes`` threads
a row, and read a row's values in rounds of :data:`UNROLL` loads ``lanes`` entries apart
(kernels/value_rounds.cuh). Rows whose first entries fall on one L1 bank (whole 128-byte lines:
float32 rows of 32, 64, ... entries, float64 rows of 16, 32, ...) make every row of a warp ask that
bank in one load, served one row a cycle: 16-way at 2 lanes. Each kernel's second entry,
``_rotated``, starts each row's round at a turn set by its row number and restores the order before
the sum (the same bits), so that load spreads over four offsets. It runs where :func:`bank_pile`
says a warp piles at least half its rows on one bank (:func:`rotates`): in float32 for both kernels,
in float64 for band.
"""

from __future__ import annotations

import numpy as np

from .stats import evenly_spaced, gather, row_pointer

__all__ = ["ROTATE_ITEMSIZES", "ROTATE_LANES", "bank_pile", "rotates"]

#: The widths at which band and rle may run their rotated entries: those session 48 timed on rle (H100).
#: Rotated everywhere, rle ran rows of 32 entries at 1.30-1.43x the plain order at 2 lanes but other
#: rows at 0.93-1.06x (sets 41-43), so the rotated entry runs only where a warp's first value load piles
#: at least half its rows on one L1 bank. Tested so on fresh sets 45 (float32 rle, session 48: 1.128x the
#: plain order on the geomean where it rotates, worst 1.023) and 46 (band, session 49: float32 1.096x,
#: worst 1.003; float64 1.071x, worst 1.006), and the plain entry itself elsewhere. At 16 and 32 lanes
#: float64 band ran 0.96-1.03x rotated (set 46), so those widths keep the plain loads.
ROTATE_LANES = (2, 4, 8)
#: The value sizes (bytes) each kernel rotates. rle keeps float64's plain loads: there the rotation cost 8
#: registers and ran 0.91-0.98x at 4 lanes (set 42, session 48); band's costs no occupancy (32 registers).
ROTATE_ITEMSIZES = {"band": (4, 8), "rle": (4,)}
BANK_WORDS = 32           # L1's banks of 4 bytes: a 128-byte line across them
UNROLL = 4                # value_rounds.cuh's loads a lane a round, passed as -DSPLA_VALUE_UNROLL (a row with fewer
                          # rounds takes no rotated load)
PILE_SAMPLE_WARPS = 1024  # warps sampled, evenly spaced


def bank_pile(indptr, lanes: int, itemsize: int) -> float:
    """How many rows of a warp's first value load at ``lanes`` ask the busiest L1 bank, median over
    sampled warps, from A's row pointer (NumPy or CuPy: only the sampled rows' pointers are read): a
    warp holds 32 / lanes rows, each reading ``lanes`` values from its first entry. 16 at 2 lanes on
    float32 rows of 32 or 64 entries (every row starts on one bank), 1-2 where row starts spread;
    rows too short for a round count for nothing (0.0 where no sampled row has one)."""
    group = 32 // lanes
    n_warps = (indptr.shape[0] - 1) // group
    if n_warps == 0:
        return 0.0
    tops = evenly_spaced(n_warps, PILE_SAMPLE_WARPS) * group
    rows = tops[:, None] + np.arange(group)
    starts = gather(indptr, rows)
    in_round = gather(indptr, rows + 1) - starts >= UNROLL * lanes
    words = max(itemsize // 4, 1)
    banks = ((starts * words) % BANK_WORDS)[:, :, None] + np.arange(lanes * words)  # warps x rows x words
    asks = np.zeros((rows.shape[0], BANK_WORDS), dtype=np.int64)
    for j in range(group):  # a row asks a bank once, however many of its words fall there
        touched = np.zeros_like(asks, dtype=bool)
        np.put_along_axis(touched, banks[:, j, :] % BANK_WORDS, True, axis=1)
        asks += touched & in_round[:, j:j + 1]
    return float(np.median(asks.max(axis=1)))


def rotates(A, family: str, lanes: int) -> bool:
    """Whether ``family`` (band or rle) at ``lanes`` runs its rotated entry on A: a value size of
    :data:`ROTATE_ITEMSIZES`, a width of :data:`ROTATE_LANES`, and at least half a warp's rows on one
    bank (:func:`bank_pile`). The pile is cached on A."""
    itemsize = np.dtype(A.dtype).itemsize
    if itemsize not in ROTATE_ITEMSIZES[family] or lanes not in ROTATE_LANES:
        return False
    key = ("rotates", lanes)
    if key not in A._cache:
        A._cache[key] = bank_pile(row_pointer(A), lanes, itemsize) >= (32 // lanes) / 2
    return A._cache[key]
