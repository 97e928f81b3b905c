"""An eighteenth held-out set, written at the end of session 24 for the next session (no device
time was left to run it), with its predictions in this folder's README. Set 17 read H8 (float32,
large regular rows of 24-128 entries run faster with staged than with segmented, now that staged
sums rows of up to 128 by thread) on three of its four long-row matrices, but rows of exactly 32
(eight 16-byte packs of 4 entries) ran segmented 1.59x faster. Hypothesis H9: rows of one length
keep segmented ahead; rows of unequal lengths (cv above about 0.1) go to staged. Three matrices of
unequal rows, two of one length that fills whole packs, and one of one length that does not (30:
7.5 packs), which tells equal length from pack alignment.

    python3 make_held_out_18.py DIR [NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "h200-2026-12-04-session19"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "h200-2026-12-04-session23"))
import make_held_out_12 as twelve  # noqa: E402
import make_held_out_large as gen  # noqa: E402

gen.RNG = np.random.default_rng(2419)
twelve.gen.RNG = gen.RNG


def scattered(n_rows: int, lo: int, hi: int, n_cols: int):
    return lambda: gen._scattered_rows(gen.RNG.integers(lo, hi + 1, n_rows), n_cols)


EIGHTEENTH = {
    # rows of unequal lengths (H9: staged ahead in float32)
    "rows-28-56-over-3M": scattered(1_200_000, 28, 56, 3_000_000),
    "rows-40-80-local-2500": lambda: twelve.long_local(750_000, 40, 80, 2500),
    "rows-80-128-over-1M": scattered(430_000, 80, 128, 1_000_000),
    # rows of one length, whole packs (H9: segmented ahead)
    "rows-32-exactly-over-2M": scattered(1_400_000, 32, 32, 2_000_000),
    "knn-48-window-5k": lambda: twelve.long_local(1_000_000, 48, 48, 5000),
    # rows of one length, not whole packs: equal length or alignment
    "rows-30-exactly-over-2M": scattered(1_500_000, 30, 30, 2_000_000),
}


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or EIGHTEENTH, EIGHTEENTH)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
