"""A thirty-eighth held-out set, written in session 45 before rle's new cut was chosen and before
any run of it: the test of that cut (R5 in this folder's README). Rows of 2-7 runs of 6-20
consecutive columns, local and scattered, node blocks of 4, 10 and 12 unknowns, and rows whose runs
vary in length. About 30M nonzeros each; every name and size is new.

    python3 make_held_out_38.py DIR [NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "cpu-2026-12-05-session44"))
import make_held_out_37 as thirty_seventh  # noqa: E402

gen, local_runs, block_rows, mixed_runs = (thirty_seventh.gen, thirty_seventh.local_runs, thirty_seventh.block_rows,
                                           thirty_seventh.mixed_runs)
gen.RNG = np.random.default_rng(4538)
thirty_seventh.twelve.gen.RNG = gen.RNG

THIRTY_EIGHTH = {
    "runs-2x12-local-4000": local_runs(1_250_000, 2, 12, 4000),
    "runs-5x12-local-3000": local_runs(500_000, 5, 12, 3000),
    "runs-3x6-local-2000": local_runs(1_650_000, 3, 6, 2000),
    "runs-2x9-scattered": local_runs(1_650_000, 2, 9, 1_650_000),
    "runs-7x9-local-3000": local_runs(480_000, 7, 9, 3000),
    "runs-4x20-scattered": local_runs(375_000, 4, 20, 375_000),
    "blocks-10x10-3": block_rows(100_000, 10, 3, 40),
    "blocks-12x12-2": block_rows(104_000, 12, 2, 40),
    "blocks-4x4-8": block_rows(235_000, 4, 8, 60),
    "mixed-6-20x4-local-8000": mixed_runs(580_000, 4, (6, 20), 8000),
    "mixed-2-8x5-local-3000": mixed_runs(1_200_000, 5, (2, 8), 3000),
}


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or THIRTY_EIGHTH, THIRTY_EIGHTH)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
