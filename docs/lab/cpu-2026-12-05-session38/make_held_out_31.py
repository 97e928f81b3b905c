"""A thirty-first held-out set, written in session 38 before any run of it, for hypothesis P5
(predictions in this folder's README): in float32's packed class (auto: segmented), rows whose
staged tile of 4,096 nonzeros gathers from at least 3,400 distinct 128-byte lines of x (columns
scattered over all of x, no line read twice) run faster with staged. Seven matrices of scattered
rows, 12-45M nonzeros, means 12-120 (P5a), and three controls of the same class whose tiles read
fewer lines (hot columns, a Kronecker product, columns in wide windows: P5b).

    python3 make_held_out_31.py DIR [NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "h200-2026-12-04-session24"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "h200-2026-12-05-session26"))
import make_held_out_18 as eighteenth  # noqa: E402
import make_held_out_22 as twenty_second  # noqa: E402

gen, twelve = twenty_second.gen, twenty_second.twelve
scattered, windows = eighteenth.scattered, twenty_second.local  # rows over all of x; rows in a window
gen.RNG = np.random.default_rng(3831)
twelve.gen.RNG = gen.RNG


def hot_columns(n_rows: int, length: int, n_cols: int, exponent: float):
    """Rows of ``length`` columns drawn from a power law of popularity over randomly placed
    columns: a few columns of x are read by many rows (a bipartite graph's hubs)."""
    def build():
        place = gen.RNG.permutation(n_cols)
        rank = np.minimum(gen.RNG.zipf(exponent, n_rows * length), n_cols) - 1
        rows = np.repeat(np.arange(n_rows, dtype=np.int64), length)
        return twelve._coo(rows, place[rank], (n_rows, n_cols))
    return build


THIRTY_FIRST = {
    # P5a: scattered over all of x
    "rows-64-128-over-3M": scattered(450_000, 64, 128, 3_000_000),
    "rows-100-140-over-2M": scattered(330_000, 100, 140, 2_000_000),
    "rows-48-80-over-800k": scattered(620_000, 48, 80, 800_000),
    "rows-20-40-over-6M": scattered(1_350_000, 20, 40, 6_000_000),
    "rows-12-exactly-over-1500k": scattered(3_300_000, 12, 12, 1_500_000),
    "rows-1-200-over-4M": scattered(400_000, 1, 200, 4_000_000),
    "rows-40-60-over-2M-12M": scattered(240_000, 40, 60, 2_000_000),
    # P5b: the same class, fewer lines a tile
    "hot-columns-24-over-4M": hot_columns(1_600_000, 24, 4_000_000, 1.15),
    "kron-500x6000": lambda: gen.kron_random(500, 4, 6000, 4),
    "rows-40-80-window-60k": windows(700_000, 40, 80, 30_000),
}


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or THIRTY_FIRST, THIRTY_FIRST)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
