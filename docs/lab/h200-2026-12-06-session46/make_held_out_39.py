"""A thirty-ninth held-out set, written in session 46 after set 38's run and before any run of
this one: the test of rle's width and cut as read off sets 30, 36, 37 and 38 (D1-D3 in this
folder's README). Rows of 2-8 runs of 9-32 consecutive columns, local and scattered, node blocks
of 6, 8, 14 and 20 unknowns, and rows whose runs vary in length. About 30M nonzeros each; every
name and size is new.

    python3 make_held_out_39.py DIR [NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "cpu-2026-12-05-session44"))
import make_held_out_37 as thirty_seventh  # noqa: E402

gen, local_runs, block_rows, mixed_runs = (thirty_seventh.gen, thirty_seventh.local_runs, thirty_seventh.block_rows,
                                           thirty_seventh.mixed_runs)
gen.RNG = np.random.default_rng(4639)
thirty_seventh.twelve.gen.RNG = gen.RNG

THIRTY_NINTH = {
    # below a cut of 12: controls
    "runs-3x9-local-5000": local_runs(1_100_000, 3, 9, 5000),
    "blocks-6x6-4": block_rows(208_000, 6, 4, 40),
    # from it
    "runs-2x16-local-6000": local_runs(940_000, 2, 16, 6000),
    "runs-3x14-scattered": local_runs(715_000, 3, 14, 715_000),
    "runs-4x12-local-20000": local_runs(625_000, 4, 12, 20_000),
    "runs-6x16-local-5000": local_runs(312_000, 6, 16, 5000),
    "runs-8x12-local-4000": local_runs(312_000, 8, 12, 4000),
    "runs-2x24-scattered": local_runs(625_000, 2, 24, 625_000),
    "runs-3x32-local-8000": local_runs(312_000, 3, 32, 8000),
    "blocks-14x14-2": block_rows(76_500, 14, 2, 40),
    "blocks-20x20-2": block_rows(37_500, 20, 2, 40),
    "blocks-8x8-5": block_rows(94_000, 8, 5, 60),
    "mixed-8-24x3-local-6000": mixed_runs(625_000, 3, (8, 24), 6000),
    "mixed-10-16x2-scattered": mixed_runs(1_150_000, 2, (10, 16), 1_150_000),
}


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or THIRTY_NINTH, THIRTY_NINTH)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
