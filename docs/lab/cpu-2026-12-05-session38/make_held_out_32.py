"""A thirty-second held-out set, written in session 38 (after its device time was spent) with its
prediction in this folder's README, for hypothesis I2: small irregular matrices (auto: adaptive2)
of at least 150,000 nonzeros whose rows average at most 10 and whose columns are rarely close run
staged, as irregular-mid does from mid_nnz = 296,491. On set 26 (I1's, which failed) such matrices
ran staged 1.2-1.45x adaptive2 in float32, while rows of 11-25 on average kept adaptive2 ahead.
Eight matrices I2 moves (power laws, lognormal degrees with and without empty rows, R-MAT,
preferential attachment, short rows with a few long ones) and three controls just past the mean
cut, which it leaves on adaptive2.

    python3 make_held_out_32.py DIR [NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "cpu-2026-12-04-session28"))
import make_held_out_26 as twenty_sixth  # noqa: E402

gen, twelve = twenty_sixth.gen, twenty_sixth.twelve
scattered, pareto, lognormal, short_and_long = (twenty_sixth.scattered, twenty_sixth.pareto, twenty_sixth.lognormal,
                                                twenty_sixth.short_and_long)
gen.RNG = np.random.default_rng(3832)
twelve.gen.RNG = gen.RNG

THIRTY_SECOND = {
    # I2a: moved to staged (rows of at most 10 on average, 150k-296k nonzeros)
    "pareto-1.6-25k": scattered(25_000, pareto(3.5, 1.6, 3000)),
    "lognormal-1.3-1.4-28k": scattered(28_000, lognormal(1.3, 1.4, 3000)),
    "rmat-15-7": lambda: gen.rmat(15, 7, (0.57, 0.19, 0.19, 0.05)),
    "short-and-long-35k": scattered(35_000, short_and_long(2, 9, (100, 300, 600), (8, 1500, 2500))),
    "preferential-35k-4": lambda: twelve.preferential(35_000, 4),
    "lognormal-empty-28k": scattered(28_000, lognormal(2.0, 1.1, 1500, empty=0.3)),
    "pareto-1.5-20k": scattered(20_000, pareto(3.0, 1.5, 4000)),
    "short-and-hubs-45k": scattered(45_000, short_and_long(1, 9, (30, 1000, 3000))),
    # I2b: controls past the mean cut (rows of 11-20 on average), left on adaptive2
    "pareto-2.2-18k": scattered(18_000, pareto(6.5, 2.2, 2000)),
    "lognormal-2.2-1.3-12k": scattered(12_000, lognormal(2.2, 1.3, 3000)),
    "preferential-16k-7": lambda: twelve.preferential(16_000, 7),
}


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or THIRTY_SECOND, THIRTY_SECOND)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
