"""A forty-first held-out set, written in session 48 after W2 was read off sets 30, 36, 38, 39 and 40 and before
any run of this one: the test of W2, float32 rle's width from the row's length and whether a tile's rows share
lines of x (this folder's README). Rows of 30-44 entries in runs of 10-22 columns, local, scattered and aligned,
which do not share lines (W2: 4 lanes where band_lanes gives 2); two near the line-sharing cut (narrow
windows); node blocks of 11-22 unknowns and jittered sliding runs, which share them (W2 keeps 2). About 30M
nonzeros each; every name and size is new.

    python3 make_held_out_41.py DIR [NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "cpu-2026-12-05-session44"))
import make_held_out_37 as thirty_seventh  # noqa: E402

gen, local_runs, block_rows, mixed_runs, twelve = (thirty_seventh.gen, thirty_seventh.local_runs,
                                                   thirty_seventh.block_rows, thirty_seventh.mixed_runs,
                                                   thirty_seventh.twelve)
gen.RNG = np.random.default_rng(4841)
twelve.gen.RNG = gen.RNG


def sliding_runs(n: int, per_row: int, width: int, spread: int, jitter: int):
    """Rows of ``per_row`` runs of ``width`` columns at offsets from the diagonal drawn once (within +-spread),
    each run's start moved by 0..jitter a row: neighbouring rows read nearly the same columns, and the runs lie
    on no few exact diagonals."""
    def build():
        offsets = gen.RNG.integers(-spread, spread + 1, per_row)
        rows = np.repeat(np.arange(n, dtype=np.int64), per_row)
        starts = np.clip(rows + np.tile(offsets, n) + gen.RNG.integers(0, jitter + 1, rows.size), 0, n - width)
        cols = (starts[:, None] + np.arange(width)).ravel()
        return twelve._coo(np.repeat(rows, width), cols, (n, n))
    return build


FORTY_FIRST = {
    # rows that do not share lines: W2 gives 4 lanes, band_lanes 2
    "runs-2x15-local-5000": local_runs(1_000_000, 2, 15, 5000),
    "runs-2x16-local-9000": local_runs(940_000, 2, 16, 9000),
    "runs-2x17-scattered": local_runs(880_000, 2, 17, 880_000),
    "runs-2x19-local-4000": local_runs(790_000, 2, 19, 4000),
    "runs-2x22-local-6000": local_runs(680_000, 2, 22, 6000),
    "runs-3x10-local-6000": local_runs(1_000_000, 3, 10, 6000),
    "runs-3x12-local-2500": local_runs(830_000, 3, 12, 2500),
    "mixed-16-26x2-local-4000": mixed_runs(715_000, 2, (16, 26), 4000),
    "runs-2x21-scattered": local_runs(715_000, 2, 21, 715_000),
    "aligned-runs-2x16-local-5000": local_runs(940_000, 2, 16, 5000, align=16),
    # narrow windows, near W2's line-sharing cut
    "runs-2x16-local-1200": local_runs(940_000, 2, 16, 1200),
    "runs-3x11-local-900": local_runs(910_000, 3, 11, 900),
    # rows that share lines: W2 keeps band_lanes' 2
    "blocks-15x15-2": block_rows(66_000, 15, 2, 50),
    "blocks-17x17-2": block_rows(52_000, 17, 2, 50),
    "blocks-22x22-2": block_rows(31_000, 22, 2, 50),
    "blocks-11x11-3": block_rows(82_000, 11, 3, 50),
    "sliding-2x16-jitter3": sliding_runs(940_000, 2, 16, 3000, 3),
}


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or FORTY_FIRST, FORTY_FIRST)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
