"""A twenty-third held-out set, written at the end of session 26 for the next session (no device
time was left to run it), with its predictions in this folder's README. Hypothesis M2: large
regular rows whose neighbouring columns are close in 25-45% of pairs and that average at most 128
entries (staged sums such rows by thread) run faster with staged than with vector, auto's medium
pick; longer rows keep vector; and rows made of runs of consecutive columns (near share 0.9-1.0)
run faster with warp than with vector.

    python3 make_held_out_23.py DIR [NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_held_out_22 as twenty_second  # noqa: E402

gen, twelve = twenty_second.gen, twenty_second.twelve
gen.RNG = np.random.default_rng(2623)
twelve.gen.RNG = gen.RNG
local, local_runs = twenty_second.local, twenty_second.local_runs

TWENTY_THIRD = {
    # near 0.25-0.45, rows of at most 128 on average (M2: staged)
    "rows-14-22-local-150": local(2_200_000, 14, 22, 150),
    "rows-40-56-local-400": local(800_000, 40, 56, 400),
    "rows-80-110-local-1000": local(400_000, 80, 110, 1000),
    "rows-24-exactly-local-180": local(1_600_000, 24, 24, 180),
    # the same shares, rows over 128 (M2: vector stays)
    "rows-150-210-local-2000": local(220_000, 150, 210, 2000),
    "rows-200-260-local-2500": local(170_000, 200, 260, 2500),
    # runs of consecutive columns (M2: warp over vector)
    "runs-3x12-local-2000": local_runs(1_100_000, 3, 12, 2000),
    "runs-6x4-local-5000": local_runs(1_600_000, 6, 4, 5000),
}


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or TWENTY_THIRD, TWENTY_THIRD)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
