"""A forty-third held-out set, written in session 48 after set 42's run and before any run of this one: the test of
B3, spmv_rle.cu's rotated value loads in float32 only (this folder's README). Rows of 24-128 entries: exact lengths
(some on one L1 bank, some not), local and scattered runs whose merges vary the lengths, node blocks of 9-32
unknowns, and jittered sliding runs. About 30M nonzeros each; every name is new.

    python3 make_held_out_43.py DIR [NAME ...]
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
gen.RNG = np.random.default_rng(4843)
thirty_seventh.twelve.gen.RNG = gen.RNG
exact_runs, sliding_runs = forty_second.exact_runs, forty_first.sliding_runs

FORTY_THIRD = {
    "exact-24-as-12+12": exact_runs(1_250_000, (12, 12), 3000),
    "exact-44-as-22+22": exact_runs(680_000, (22, 22), 3000),
    "exact-72-as-36+36": exact_runs(416_000, (36, 36), 3000),
    "exact-128-as-64+64": exact_runs(234_000, (64, 64), 3000),
    "runs-2x20-local-5000": local_runs(750_000, 2, 20, 5000),
    "runs-3x16-local-7000": local_runs(625_000, 3, 16, 7000),
    "runs-4x16-scattered": local_runs(470_000, 4, 16, 470_000),
    "runs-2x26-local-3500": local_runs(577_000, 2, 26, 3500),
    "runs-5x20-local-9000": local_runs(300_000, 5, 20, 9000),
    "runs-6x20-local-10000": local_runs(250_000, 6, 20, 10_000),
    "mixed-14-34x2-local-6000": mixed_runs(625_000, 2, (14, 34), 6000),
    "blocks-16x16-2": block_rows(58_600, 16, 2, 50),
    "blocks-24x24-2": block_rows(26_000, 24, 2, 50),
    "blocks-12x12-3": block_rows(69_400, 12, 3, 50),
    "blocks-9x9-4": block_rows(92_500, 9, 4, 50),
    "blocks-32x32-1": block_rows(29_300, 32, 1, 50),
    "sliding-3x12-jitter2": sliding_runs(830_000, 3, 12, 3000, 2),
}


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or FORTY_THIRD, FORTY_THIRD)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
