"""Sets 54 (fit) and 55 (test), written in session 50 before any run of either: short-wide matrices, rows of 6k-60k
distinct random columns, 150-1,600 rows, x of 1-50M columns. Set 53's short-wide-800x10M ran vector at 1.45x
(float32) and 2.2x (float64) auto's staged: with 800 rows it misses the "long" class (a warp a row, vector), which
asks for at least long_rows = 1,024 rows (set from 132 SMs x 8 warps, never fitted), and lands in irregular-large.
Set 54 places the row count (and whatever else sorts vector from staged); set 55 tests it, read only after the rule
is written in the README.

    python3 make_short_wide_54.py DIR fit|test
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "h200-2026-12-04-session19"))
import make_held_out_large as gen  # noqa: E402


def wide(n_rows: int, length: int, n_cols: int):
    return lambda: gen._scattered_rows(np.full(n_rows, length), n_cols)


FIT = {
    "wide-200x40k-over-8M": wide(200, 40_000, 8_000_000),
    "wide-400x20k-over-8M": wide(400, 20_000, 8_000_000),
    "wide-800x10k-over-2M": wide(800, 10_000, 2_000_000),
    "wide-800x20k-over-20M": wide(800, 20_000, 20_000_000),
    "wide-400x50k-over-30M": wide(400, 50_000, 30_000_000),
    "wide-1600x10k-over-20M": wide(1600, 10_000, 20_000_000),
    "wide-300x30k-over-1M": wide(300, 30_000, 1_000_000),
    "wide-600x15k-over-12M": wide(600, 15_000, 12_000_000),
}

TEST = {
    "wide-250x30k-over-15M": wide(250, 30_000, 15_000_000),
    "wide-500x25k-over-5M": wide(500, 25_000, 5_000_000),
    "wide-700x12k-over-25M": wide(700, 12_000, 25_000_000),
    "wide-950x8k-over-3M": wide(950, 8_000, 3_000_000),
    "wide-350x45k-over-40M": wide(350, 45_000, 40_000_000),
    "wide-1200x15k-over-10M": wide(1200, 15_000, 10_000_000),
    "wide-150x60k-over-20M": wide(150, 60_000, 20_000_000),
    "wide-600x6k-over-50M": wide(600, 6_000, 50_000_000),
}


if __name__ == "__main__":
    gen.RNG = np.random.default_rng({"fit": 5454, "test": 5555}[sys.argv[2]])
    table = {"fit": FIT, "test": TEST}[sys.argv[2]]
    gen.write(Path(sys.argv[1]), table, table)
