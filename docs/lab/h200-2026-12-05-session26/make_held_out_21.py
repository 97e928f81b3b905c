"""A twenty-first held-out set, written in session 26 after call 2 and before any run of it, for
rule R1 (predictions in this folder's README): a float32 regular-large-packed matrix whose
neighbouring entries' columns are close in at least 5% of pairs (near share) runs staged, not
segmented. Local rows of several lengths and reaches on both sides of that share, and rows of one
length (whole 16-byte packs: segmented's best case) among them.

    python3 make_held_out_21.py DIR [NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "h200-2026-12-04-session19"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "h200-2026-12-04-session23"))
import make_held_out_12 as twelve  # noqa: E402
import make_held_out_large as gen  # noqa: E402

gen.RNG = np.random.default_rng(2621)
twelve.gen.RNG = gen.RNG


def local(n: int, lo: int, hi: int, reach: int):
    return lambda: twelve.long_local(n, lo, hi, reach)


TWENTY_FIRST = {
    "rows-40-60-local-1200": local(800_000, 40, 60, 1200),
    "rows-16-30-local-500": local(1_600_000, 16, 30, 500),
    "rows-100-160-local-3000": local(300_000, 100, 160, 3000),
    "rows-36-44-local-1500": local(1_000_000, 36, 44, 1500),
    "rows-8-14-local-250": local(3_500_000, 8, 14, 250),
    "rows-30-50-local-8000": local(1_000_000, 30, 50, 8000),
    "rows-10-30-local-4000": local(2_000_000, 10, 30, 4000),
    "rows-40-exactly-local-3000": local(1_000_000, 40, 40, 3000),
    "rows-64-exactly-local-1500": local(600_000, 64, 64, 1500),
    "rows-20-28-local-2500": local(1_600_000, 20, 28, 2500),
}


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or TWENTY_FIRST, TWENTY_FIRST)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
