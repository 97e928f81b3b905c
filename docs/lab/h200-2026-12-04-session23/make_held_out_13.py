"""A thirteenth held-out set, written in session 23 after set 12's one miss and before any run of
it: rows-40-60-local (rows of 40-60 within +-500 of the diagonal) fell in the rule's regular-large
class (its near share 0.33, under mid_near 0.457) and ran staged at 0.77 of vector in float64
(segmented 0.93 of vector in float32). Hypothesis H4: large regular rows whose neighbouring
entries are often close (near share 0.25 to mid_near) run faster with vector than with the
regular-large kernels. Four more matrices of rows within a reach of the diagonal, of other lengths and reaches (two
of them under a near share of 0.25: whether vector's gain follows the near share or the rows'
shared windows), and one control of rows of 40-60 over scattered columns.

    python3 make_held_out_13.py DIR [NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "h200-2026-12-04-session19"))
import make_held_out_12 as twelve  # noqa: E402
import make_held_out_large as gen  # noqa: E402

gen.RNG = np.random.default_rng(2313)

THIRTEENTH = {
    "rows-30-50-local-300": lambda: twelve.long_local(1_200_000, 30, 50, 300),
    "rows-60-100-local-2000": lambda: twelve.long_local(500_000, 60, 100, 2000),
    "rows-24-40-local-1000": lambda: twelve.long_local(1_600_000, 24, 40, 1000),
    "rows-16-24-local-150": lambda: twelve.long_local(2_000_000, 16, 24, 150),
    "rows-40-60-over-2M": lambda: gen._scattered_rows(gen.RNG.integers(40, 61, 1_000_000), 2_000_000),
}


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or THIRTEENTH, THIRTEENTH)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
