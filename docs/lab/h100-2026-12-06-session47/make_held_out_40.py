"""A fortieth held-out set, written in session 47 after set 39's run and before any run of this one: the test of
W1, rle's width from a row's entries (this folder's README). Rows of 26-120 entries in runs of 11-40 columns, local
and scattered, node blocks of 13, 18 and 26 unknowns, and rows whose runs vary in length, chosen where W1 and
band_lanes give different widths in one dtype or the other. About 30M nonzeros each; every name and size is new.

    python3 make_held_out_40.py DIR [NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "cpu-2026-12-05-session44"))
import make_held_out_37 as thirty_seventh  # noqa: E402

gen, local_runs, block_rows, mixed_runs = (thirty_seventh.gen, thirty_seventh.local_runs, thirty_seventh.block_rows,
                                           thirty_seventh.mixed_runs)
gen.RNG = np.random.default_rng(4740)
thirty_seventh.twelve.gen.RNG = gen.RNG

FORTIETH = {
    "runs-2x13-local-4000": local_runs(1_150_000, 2, 13, 4000),
    "runs-2x18-local-7000": local_runs(830_000, 2, 18, 7000),
    "blocks-18x18-2": block_rows(46_000, 18, 2, 50),
    "runs-3x13-scattered": local_runs(770_000, 3, 13, 770_000),
    "runs-2x20-local-3000": local_runs(750_000, 2, 20, 3000),
    "mixed-12-30x2-local-5000": mixed_runs(710_000, 2, (12, 30), 5000),
    "runs-3x17-local-9000": local_runs(590_000, 3, 17, 9000),
    "blocks-13x13-4": block_rows(44_000, 13, 4, 60),
    "runs-4x14-scattered": local_runs(535_000, 4, 14, 535_000),
    "runs-3x24-local-4000": local_runs(415_000, 3, 24, 4000),
    "runs-5x16-local-6000": local_runs(375_000, 5, 16, 6000),
    "blocks-26x26-3": block_rows(14_800, 26, 3, 40),
    "runs-4x26-scattered": local_runs(290_000, 4, 26, 290_000),
    "runs-3x40-local-10000": local_runs(250_000, 3, 40, 10_000),
    # added before any run, where only float64's widths differ
    "runs-2x14-scattered": local_runs(1_070_000, 2, 14, 1_070_000),
    "runs-5x11-local-5000": local_runs(545_000, 5, 11, 5000),
    "runs-4x25-local-8000": local_runs(300_000, 4, 25, 8000),
}


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or FORTIETH, FORTIETH)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
