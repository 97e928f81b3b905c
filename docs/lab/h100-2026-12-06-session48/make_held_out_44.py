"""A forty-fourth held-out set, written in session 48 after set 43's run and before any run of this one: the test of
B4, rle's float32 value loads rotated where a warp piles at least half its rows on one L1 bank (this folder's README).
Rows of 16-112 entries: exact lengths that pile and that do not, node blocks of 8-32 unknowns, sliding runs, local,
scattered and aligned runs whose merges vary the lengths. About 30M nonzeros each; every name is new.

    python3 make_held_out_44.py DIR [NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "cpu-2026-12-05-session44"))
import make_held_out_37 as thirty_seventh  # noqa: E402
import make_held_out_41 as forty_first  # noqa: E402
import make_held_out_42 as forty_second  # noqa: E402

gen, local_runs, block_rows, mixed_runs = (thirty_seventh.gen, thirty_seventh.local_runs, thirty_seventh.block_rows,
                                           thirty_seventh.mixed_runs)
gen.RNG = np.random.default_rng(4844)
thirty_seventh.twelve.gen.RNG = gen.RNG
exact_runs, sliding_runs = forty_second.exact_runs, forty_first.sliding_runs

FORTY_FOURTH = {
    "exact-16-as-8+8": exact_runs(1_875_000, (8, 8), 3000),
    "exact-20-as-10+10": exact_runs(1_500_000, (10, 10), 3000),
    "exact-60-as-30+30": exact_runs(500_000, (30, 30), 3000),
    "exact-80-as-40+40": exact_runs(375_000, (40, 40), 3000),
    "exact-112-as-56+56": exact_runs(268_000, (56, 56), 3000),
    "runs-2x16-local-15000": local_runs(940_000, 2, 16, 15_000),
    "runs-3x20-local-6000": local_runs(500_000, 3, 20, 6000),
    "runs-2x32-scattered": local_runs(470_000, 2, 32, 470_000),
    "runs-4x24-local-5000": local_runs(312_000, 4, 24, 5000),
    "aligned-runs-4x16-local-4000": local_runs(470_000, 4, 16, 4000, align=16),
    "mixed-20-44x2-local-7000": mixed_runs(470_000, 2, (20, 44), 7000),
    "blocks-8x8-8": block_rows(58_600, 8, 8, 60),
    "blocks-20x20-3": block_rows(25_000, 20, 3, 50),
    "blocks-16x16-4": block_rows(29_300, 16, 4, 60),
    "blocks-32x32-2": block_rows(14_600, 32, 2, 50),
    "sliding-4x16-jitter1": sliding_runs(470_000, 4, 16, 3000, 1),
    "sliding-2x24-jitter2": sliding_runs(625_000, 2, 24, 3000, 2),
}


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or FORTY_FOURTH, FORTY_FOURTH)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
