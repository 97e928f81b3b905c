"""A forty-seventh held-out set, written in session 49 before any run of it: the test of W3, float32 rle at 4 lanes
in place of band's 2 where rows average 29 entries or more and rarely repeat the row before
(spla.planning.spmv.rle_lanes, repeat_share; this folder's README). Rows of 28-44 entries in runs of 14-24: local,
scattered and sliding runs, exact lengths, rows whose runs vary, and node blocks (whose rows repeat: 2 lanes kept).
About 28M nonzeros each; every name is new.

    python3 make_held_out_47.py DIR [NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "h100-2026-12-06-session48"))
sys.path.insert(0, str(HERE.parent / "cpu-2026-12-05-session44"))
import make_held_out_37 as thirty_seventh  # noqa: E402
import make_held_out_41 as forty_first  # noqa: E402
import make_held_out_42 as forty_second  # noqa: E402

gen, local_runs, block_rows = thirty_seventh.gen, thirty_seventh.local_runs, thirty_seventh.block_rows
mixed_runs = thirty_seventh.mixed_runs
gen.RNG = np.random.default_rng(4947)
thirty_seventh.twelve.gen.RNG = gen.RNG
exact_runs, sliding_runs = forty_second.exact_runs, forty_first.sliding_runs

FORTY_SEVENTH = {
    # W3 gives 4 lanes where band_lanes gives 2: rows of 29 and more that do not repeat
    "runs-2x15-local-1500": local_runs(930_000, 2, 15, 1500),
    "runs-2x16-local-600": local_runs(875_000, 2, 16, 600),
    "runs-2x17-local-3000": local_runs(825_000, 2, 17, 3000),
    "runs-2x18-scattered": local_runs(780_000, 2, 18, 780_000),
    "runs-2x20-local-7000": local_runs(700_000, 2, 20, 7000),
    "runs-3x14-local-5000": local_runs(670_000, 3, 14, 5000),
    "exact-32-as-16+16": exact_runs(875_000, (16, 16), 2000),
    "exact-34-as-16+18": exact_runs(825_000, (16, 18), 4000),
    "exact-40-as-18+22": exact_runs(700_000, (18, 22), 3000),
    "sliding-2x16-jitter6": sliding_runs(875_000, 2, 16, 3000, 6),
    "sliding-2x18-jitter2": sliding_runs(780_000, 2, 18, 4000, 2),
    "mixed-2x16-24-local-3000": mixed_runs(700_000, 2, (16, 24), 3000),
    # both keep 2 lanes: rows that repeat (blocks) and rows under 29
    "blocks-10x10-3": block_rows(93_000, 10, 3, 60),
    "blocks-13x13-3": block_rows(72_000, 13, 3, 60),
    "blocks-16x16-2": block_rows(87_500, 16, 2, 60),
    "blocks-19x19-2": block_rows(74_000, 19, 2, 60),
    "runs-2x14-local-4000": local_runs(1_000_000, 2, 14, 4000),
}


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or FORTY_SEVENTH, FORTY_SEVENTH)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
