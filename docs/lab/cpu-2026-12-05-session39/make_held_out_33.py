"""A thirty-third held-out set, written in session 39 with its prediction in this folder's README,
for O1: adaptive2's plan moves its heavy descriptors (a block a row, chunks, rows path) to the
front of the launch, which, in a plan of fewer than TAIL_BLOCKS descriptors, is all of them. On
sets 26 and 32, matrices whose adaptive and adaptive2 plans hold the same descriptors ran adaptive
(row order) up to 1.6x faster. Nine matrices of 0.2-3.5M nonzeros with rows over 256 entries
(the heavy descriptors) and two controls without any, none of them in an earlier set.

    python3 make_held_out_33.py DIR [NAME ...]
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
gen.RNG = np.random.default_rng(3933)
twelve.gen.RNG = gen.RNG

THIRTY_THIRD = {
    # heavy descriptors in a plan of fewer than TAIL_BLOCKS (2,048) descriptors
    "short-and-hubs-80k": scattered(80_000, short_and_long(2, 9, (80, 600, 2500))),
    "pareto-1.7-60k": scattered(60_000, pareto(4.0, 1.7, 3000)),
    "lognormal-1.5-1.5-50k": scattered(50_000, lognormal(1.5, 1.5, 2500)),
    "preferential-60k-5": lambda: twelve.preferential(60_000, 5),
    "short-and-500s-25k": scattered(25_000, short_and_long(3, 12, (40, 400, 700))),
    "rmat-16-6": lambda: gen.rmat(16, 6, (0.55, 0.20, 0.20, 0.05)),
    "short-and-long-150k": scattered(150_000, short_and_long(4, 10, (300, 300, 1000), (30, 2000, 4000))),
    "lognormal-empty-100k": scattered(100_000, lognormal(2.0, 1.3, 3000, empty=0.25)),
    "pareto-1.4-200k": scattered(200_000, pareto(5.0, 1.4, 4000)),
    # controls: no row over 256 entries, so no heavy descriptor to move
    "lognormal-1.8-0.8-40k": scattered(40_000, lognormal(1.8, 0.8, 256)),
    "uniform-3-20-60k": scattered(60_000, short_and_long(3, 20)),
}


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or THIRTY_THIRD, THIRTY_THIRD)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
