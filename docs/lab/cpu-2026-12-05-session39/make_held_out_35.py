"""A thirty-fifth held-out set, written in session 39 with its prediction in this folder's README,
for B3: adaptive2's loads in predicated batches of 4 held to float32's 32 registers (b4s4m8), decided by
device time on matrices it was not seen on. Ten small irregular matrices of 0.2-1.6M nonzeros,
shapes and seeds in no earlier set: power laws, lognormal degrees with and without empty rows,
preferential attachment, R-MAT, uniform short rows and short rows with long ones.

    python3 make_held_out_35.py DIR [NAME ...]
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
gen.RNG = np.random.default_rng(3935)
twelve.gen.RNG = gen.RNG

THIRTY_FIFTH = {
    "pareto-1.8-40k": scattered(40_000, pareto(4.0, 1.8, 2500)),
    "lognormal-1.6-1.3-45k": scattered(45_000, lognormal(1.6, 1.3, 1800)),
    "preferential-50k-4": lambda: twelve.preferential(50_000, 4),
    "short-and-350s-70k": scattered(70_000, short_and_long(2, 8, (90, 260, 480))),
    "rmat-15-10": lambda: gen.rmat(15, 10, (0.55, 0.2, 0.2, 0.05)),
    "lognormal-empty-90k": scattered(90_000, lognormal(2.0, 1.1, 1200, empty=0.25)),
    "uniform-4-24-50k": scattered(50_000, short_and_long(4, 24)),
    "pareto-2.0-120k": scattered(120_000, pareto(6.0, 2.0, 2000)),
    "short-and-hubs-150k": scattered(150_000, short_and_long(2, 7, (40, 3000, 8000))),
    "short-and-long-100k": scattered(100_000, short_and_long(3, 10, (250, 300, 1000))),
}


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or THIRTY_FIFTH, THIRTY_FIFTH)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
