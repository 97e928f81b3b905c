"""A seventeenth held-out set, written in session 24 after staged's LONG went from 32 to 128 and
before any run of it. With rows of up to 128 summed by their thread, staged became the fastest spla
kernel on set 13's float32 long rows (1.02-1.08x cuSPARSE), where the rule runs segmented (its
regular-large-packed class: float32, rows of at least packed_mean = 7 on average): 0.89-0.96x.
Hypothesis H8: in float32, large regular rows of 24-128 entries over scattered or wide-window
columns run faster with staged than with segmented. Four such matrices and one control of rows
of 12-20; predictions in this folder's README.

    python3 make_held_out_17.py DIR [NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "h200-2026-12-04-session19"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "h200-2026-12-04-session23"))
import make_held_out_12 as twelve  # noqa: E402
import make_held_out_large as gen  # noqa: E402

gen.RNG = np.random.default_rng(2418)
twelve.gen.RNG = gen.RNG

SEVENTEENTH = {
    "rows-24-48-over-4M": lambda: gen._scattered_rows(gen.RNG.integers(24, 49, 1_400_000), 4_000_000),
    "rows-32-64-local-3000": lambda: twelve.long_local(1_000_000, 32, 64, 3000),
    "rows-64-128-over-500k": lambda: gen._scattered_rows(gen.RNG.integers(64, 129, 450_000), 500_000),
    "knn-32-window-20k": lambda: twelve.long_local(1_500_000, 32, 32, 20_000),
    "rows-12-20-over-2M (control)": lambda: gen._scattered_rows(gen.RNG.integers(12, 21, 3_000_000), 2_000_000),
}
SEVENTEENTH["rows-12-20-over-2M"] = SEVENTEENTH.pop("rows-12-20-over-2M (control)")


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or SEVENTEENTH, SEVENTEENTH)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
