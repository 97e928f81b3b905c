"""A thirty-sixth held-out set, written in session 44 before any run of it, for the rle kernel
(predictions in this folder's README): rows made of runs of consecutive columns, the runs 2-32
long, where auto runs staged today. Runs of 2 and 3 sit below rle.AUTO_MIN_RUN (auto keeps
staged: the controls); runs of 4-32 at or above it, local or scattered; and dense node blocks of
2, 3 and 6 unknowns (finite elements of several unknowns a node). About 30M nonzeros each.

    python3 make_held_out_36.py DIR [NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "cpu-2026-12-05-session38"))
import make_held_out_30 as thirtieth  # noqa: E402

gen, local_runs, block_rows = thirtieth.gen, thirtieth.local_runs, thirtieth.block_rows
gen.RNG = np.random.default_rng(4436)
thirtieth.twelve.gen.RNG = gen.RNG

THIRTY_SIXTH = {
    # below AUTO_MIN_RUN: auto keeps staged (controls of the rule)
    "runs-10x2-local-2000": local_runs(1_500_000, 10, 2, 2000),
    "runs-8x3-local-2000": local_runs(1_250_000, 8, 3, 2000),
    # at and above it
    "runs-6x4-local-2000": local_runs(1_250_000, 6, 4, 2000),
    "runs-4x6-local-2000": local_runs(1_250_000, 4, 6, 2000),
    "runs-3x12-scattered": local_runs(800_000, 3, 12, 800_000),
    "runs-2x32-local-5000": local_runs(450_000, 2, 32, 5000),
    # node blocks of 2, 3 and 6 unknowns
    "blocks-2x2-12": block_rows(625_000, 2, 12, 50),
    "blocks-3x3-9": block_rows(370_000, 3, 9, 30),
    "blocks-6x6-5": block_rows(170_000, 6, 5, 40),
}


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or THIRTY_SIXTH, THIRTY_SIXTH)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
