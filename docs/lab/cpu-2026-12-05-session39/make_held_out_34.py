"""A thirty-fourth held-out set, written in session 39 with its prediction in this folder's README,
for B2': adaptive2's stream blocks reading their products in one predicated batch (s8), decided by
device time on matrices it was not seen on. Twelve small irregular matrices of 0.2-2M nonzeros,
shapes and seeds in no earlier set: power laws, lognormal degrees with and without empty rows,
preferential attachment, R-MAT, uniform short rows and short rows with long ones.

    python3 make_held_out_34.py DIR [NAME ...]
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
gen.RNG = np.random.default_rng(3934)
twelve.gen.RNG = gen.RNG

THIRTY_FOURTH = {
    "pareto-1.6-45k": scattered(45_000, pareto(4.5, 1.6, 3000)),
    "lognormal-1.4-1.4-35k": scattered(35_000, lognormal(1.4, 1.4, 2000)),
    "preferential-30k-6": lambda: twelve.preferential(30_000, 6),
    "short-and-400s-50k": scattered(50_000, short_and_long(2, 9, (60, 300, 500))),
    "rmat-16-8": lambda: gen.rmat(16, 8, (0.57, 0.19, 0.19, 0.05)),
    "lognormal-empty-70k": scattered(70_000, lognormal(2.1, 1.2, 2000, empty=0.3)),
    "uniform-2-30-80k": scattered(80_000, short_and_long(2, 30)),
    "pareto-2.5-100k": scattered(100_000, pareto(8.0, 2.5, 1500)),
    "short-and-hubs-120k": scattered(120_000, short_and_long(3, 8, (50, 2000, 6000))),
    "lognormal-2.5-0.9-20k": scattered(20_000, lognormal(2.5, 0.9, 800)),
    "preferential-100k-3": lambda: twelve.preferential(100_000, 3),
    "short-and-long-200k": scattered(200_000, short_and_long(3, 9, (400, 300, 900))),
}


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or THIRTY_FOURTH, THIRTY_FOURTH)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
