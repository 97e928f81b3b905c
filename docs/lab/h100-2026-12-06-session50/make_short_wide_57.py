"""Set 57, written in session 50 for the next session (no run yet): the test of G, the few-rows path's bound on the
longest row (1.25x the mean, read off one matrix of set 56). Rows of lengths drawn uniformly from L(1-d)..L(1+d) (the
longest about (1+d) times the mean), 350-900 rows over 60-200 MB of x (float32), plus rows of one length as controls.

    python3 make_short_wide_57.py DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "h200-2026-12-04-session19"))
import make_held_out_large as gen  # noqa: E402


def spread(n_rows: int, length: int, d: float, n_cols: int):
    """Rows of length uniform in length * (1 - d) .. length * (1 + d)."""
    low, high = int(length * (1 - d)), int(length * (1 + d))
    return lambda: gen._scattered_rows(gen.RNG.integers(low, high + 1, n_rows), n_cols)


SET_57 = {
    "spread-0.00-500x20k-over-25M": spread(500, 20_000, 0.0, 25_000_000),
    "spread-0.05-500x20k-over-25M": spread(500, 20_000, 0.05, 25_000_000),
    "spread-0.10-600x15k-over-30M": spread(600, 15_000, 0.10, 30_000_000),
    "spread-0.20-450x25k-over-20M": spread(450, 25_000, 0.20, 20_000_000),
    "spread-0.30-700x12k-over-40M": spread(700, 12_000, 0.30, 40_000_000),
    "spread-0.50-400x30k-over-50M": spread(400, 30_000, 0.50, 50_000_000),
    "spread-0.80-900x10k-over-15M": spread(900, 10_000, 0.80, 15_000_000),
    "spread-0.15-350x40k-over-35M": spread(350, 40_000, 0.15, 35_000_000),
}


if __name__ == "__main__":
    gen.RNG = np.random.default_rng(5757)
    gen.write(Path(sys.argv[1]), SET_57, SET_57)
