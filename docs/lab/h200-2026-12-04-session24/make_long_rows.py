"""Matrices of rows longer than staged's LONG (128) for the LONG sweep of session 24's call 7: rows
of 100-200 within +-1,000 columns and rows of 200-400 over 1M scattered columns.

    python3 make_long_rows.py DIR [NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "h200-2026-12-04-session19"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "h200-2026-12-04-session23"))
import make_held_out_12 as twelve  # noqa: E402
import make_held_out_large as gen  # noqa: E402

gen.RNG = np.random.default_rng(2417)
twelve.gen.RNG = gen.RNG

LONG_ROWS = {
    "rows-100-200-local-1000": lambda: twelve.long_local(300_000, 100, 200, 1000),
    "rows-200-400-over-1M": lambda: gen._scattered_rows(gen.RNG.integers(200, 401, 150_000), 1_000_000),
}


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or LONG_ROWS, LONG_ROWS)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
