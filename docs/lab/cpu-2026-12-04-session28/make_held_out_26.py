"""A twenty-sixth held-out set, written in session 28 (no device machine was lent) with its
prediction in this folder's README, for hypothesis I1: small irregular matrices (under mid_nnz =
296,491 nonzeros, where auto runs adaptive2) should run staged, as irregular-mid does from mid_nnz,
where at least 30% of their nonzeros lie in rows of 33-512 entries. On the records staged led
adaptive2 1.06-1.41x on such matrices (wiki-Vote, a power law, two R-MATs), while adaptive2 or
adaptive led where the work sat in short rows and a few long ones (vsp_sctap1-2b_and_seymourl,
vsp_befref_fxm_2_4_air02, mid-row shares 0.06-0.11). Shapes in no corpus family: Pareto, lognormal
and preferential-attachment degrees, a flatter R-MAT, rows with many empty ones, and controls
whose work sits in short rows and a few long ones, two of them near the cut.

    python3 make_held_out_26.py DIR [NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

LAB = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(LAB / "cpu-2026-12-04-session27"))
import make_held_out_24 as twenty_fourth  # noqa: E402

gen, twelve = twenty_fourth.gen, twenty_fourth.twelve
gen.RNG = np.random.default_rng(2826)
twelve.gen.RNG = gen.RNG


def scattered(n: int, lengths, n_cols: int | None = None):
    """n rows of lengths(n) uniformly random columns (over n_cols, default n)."""
    return lambda: gen._scattered_rows(np.asarray(lengths(n), dtype=np.int64), n_cols or n)


def pareto(scale: float, shape: float, cap: int):
    """Row lengths scale * (1 + Pareto(shape)), at most cap: a power law with a smooth head."""
    return lambda n: np.minimum((scale * (1 + gen.RNG.pareto(shape, n))).astype(np.int64), cap)


def lognormal(mu: float, sigma: float, cap: int, empty: float = 0.0):
    """Row lengths round(LogNormal(mu, sigma)), 1..cap; a share empty of the rows empty."""
    def lengths(n):
        out = np.clip(np.rint(gen.RNG.lognormal(mu, sigma, n)), 1, cap).astype(np.int64)
        out[gen.RNG.random(n) < empty] = 0
        return out
    return lengths


def short_and_long(lo: int, hi: int, *groups):
    """Rows of lo..hi entries, and for each (count, long_lo, long_hi) of groups, count rows (spread
    evenly) of long_lo..long_hi."""
    def lengths(n):
        out = gen.RNG.integers(lo, hi + 1, n)
        for count, long_lo, long_hi in groups:
            where = gen.RNG.choice(n, count, replace=False)
            out[where] = gen.RNG.integers(long_lo, long_hi + 1, count)
        return out
    return lengths


TWENTY_SIXTH = {
    # I1 moves these to staged (mid-row share at least 0.3)
    "pareto-2-12k": scattered(12_000, pareto(12.0, 2.0, 3000)),
    "lognormal-2.6-10k": scattered(10_000, lognormal(2.6, 1.1, 2000)),
    "lognormal-2-1.2-16k": scattered(16_000, lognormal(2.0, 1.2, 2000)),
    "lognormal-empty-26k": scattered(26_000, lognormal(2.2, 1.15, 1500, empty=0.35)),
    "rmat-14-12-flat": lambda: gen.rmat(14, 12, (0.50, 0.20, 0.20, 0.10)),
    "cut-probe-high-30k": scattered(30_000, short_and_long(2, 8, (1_500, 40, 120), (20, 800, 1200))),
    # controls, under the cut: power laws whose work sits in short rows and hubs ...
    "pareto-1.5-30k": scattered(30_000, pareto(3.0, 1.5, 4000)),
    "pareto-2.2-20k": scattered(20_000, pareto(6.0, 2.2, 2000)),
    "preferential-18k-6": lambda: twelve.preferential(18_000, 6),
    # ... and short rows with a few long ones
    "cut-probe-low-30k": scattered(30_000, short_and_long(2, 8, (700, 40, 120), (20, 800, 1200))),
    "vsp-like-30k": scattered(30_000, short_and_long(3, 9, (60, 700, 1500))),
    "short-and-300s-40k": scattered(40_000, short_and_long(2, 10, (120, 200, 400), (10, 1000, 2000))),
}


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or TWENTY_SIXTH, TWENTY_SIXTH)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
