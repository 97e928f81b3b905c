"""A twenty-fifth held-out set, written in session 27 (no device machine was lent) with its
prediction in this folder's README, for hypothesis P2: auto's packed class (float32 regular rows
whose columns are rarely near, 4 entries a 16-byte pack; segmented today) should keep only rows of
one length. Packed rows whose lengths vary (cv at least 0.1) should run staged, at any near share.
On the records, staged led segmented on 23 of the 24 float32 held-out runs that P2 moves (1.01-1.19x).
It trailed on one, rows-30-60-local-20000, where segmented was 1.54x faster. So this set has rows of
varying length, scattered and local, two of them with wide local reaches like that one's, and
three controls of one length.

    python3 make_held_out_25.py DIR [NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_held_out_24 as twenty_fourth  # noqa: E402

gen, twelve = twenty_fourth.gen, twenty_fourth.twelve
gen.RNG = np.random.default_rng(2725)
twelve.gen.RNG = gen.RNG


def scattered(n: int, lengths, n_cols: int):
    """n rows of lengths(n) uniformly random columns over n_cols."""
    return lambda: gen._scattered_rows(lengths(n), n_cols)


def uniform(lo: int, hi: int):
    return lambda n: gen.RNG.integers(lo, hi + 1, n)


def two_lengths(short: int, long: int, share_long: float):
    return lambda n: np.where(gen.RNG.random(n) < share_long, long, short)


def local(n: int, lo: int, hi: int, reach: int):
    return lambda: twelve.long_local(n, lo, hi, reach)


TWENTY_FIFTH = {
    # rows of varying length (P2: staged)
    "rows-5-15-over-3M": scattered(4_000_000, uniform(5, 15), 3_000_000),
    "rows-24-56-over-1500k": scattered(1_000_000, uniform(24, 56), 1_500_000),
    "rows-4-or-20-over-2M": scattered(3_300_000, two_lengths(4, 20, 0.5), 2_000_000),
    "rows-8-24-local-30000": local(2_500_000, 8, 24, 30_000),
    "rows-30-60-local-12000": local(900_000, 30, 60, 12_000),
    # rows of one length (P2: segmented stays)
    "knn-24-window-12k": local(1_600_000, 24, 24, 12_000),
    "rows-16-exactly-over-5M": scattered(2_500_000, uniform(16, 16), 5_000_000),
    "rows-40-exactly-local-10000": local(1_000_000, 40, 40, 10_000),
}


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or TWENTY_FIFTH, TWENTY_FIFTH)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
