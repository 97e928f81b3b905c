"""A forty-fifth held-out set, written in session 48 after set 44's run and before any run of this one: the test of
B5, rle's float32 rotated loads in an entry point of their own, run where a warp piles at least half its rows on
one L1 bank (this folder's README). Rows of 16-96 entries: exact lengths in unequal runs that pile and that do
not, node blocks of 8-32 unknowns, sliding runs, local and scattered runs whose merges vary the lengths. About 30M
nonzeros each; every name is new.

    python3 make_held_out_45.py DIR [NAME ...]
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

gen, local_runs, block_rows = thirty_seventh.gen, thirty_seventh.local_runs, thirty_seventh.block_rows
gen.RNG = np.random.default_rng(4845)
thirty_seventh.twelve.gen.RNG = gen.RNG
exact_runs, sliding_runs = forty_second.exact_runs, forty_first.sliding_runs

FORTY_FIFTH = {
    "exact-16-as-6+10": exact_runs(1_875_000, (6, 10), 3000),
    "exact-26-as-13+13": exact_runs(1_150_000, (13, 13), 3000),
    "exact-32-as-12+20": exact_runs(940_000, (12, 20), 3000),
    "exact-48-as-20+28": exact_runs(625_000, (20, 28), 3000),
    "exact-52-as-26+26": exact_runs(577_000, (26, 26), 3000),
    "exact-64-as-24+40": exact_runs(470_000, (24, 40), 3000),
    "exact-96-as-40+56": exact_runs(312_000, (40, 56), 3000),
    "runs-2x16-local-2500": local_runs(940_000, 2, 16, 2500),
    "runs-2x16-scattered": local_runs(940_000, 2, 16, 940_000),
    "runs-3x18-local-8000": local_runs(555_000, 3, 18, 8000),
    "blocks-8x8-2": block_rows(234_000, 8, 2, 60),
    "blocks-12x12-4": block_rows(52_000, 12, 4, 60),
    "blocks-14x14-3": block_rows(51_000, 14, 3, 60),
    "blocks-16x16-6": block_rows(19_500, 16, 6, 60),
    "blocks-32x32-3": block_rows(9_800, 32, 3, 50),
    "sliding-2x16-jitter2": sliding_runs(940_000, 2, 16, 3000, 2),
    "sliding-3x16-jitter3": sliding_runs(625_000, 3, 16, 3000, 3),
}


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or FORTY_FIFTH, FORTY_FIFTH)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
