"""A thirty-seventh held-out set, written in session 44 after set 36's run and before any run of
this one, to test rle.AUTO_MIN_RUN = 6.5 (read off set 36; predictions in this folder's README):
rows made of runs of 5-12 consecutive columns around the cut, local and scattered, node blocks of
5, 7 and 8 unknowns, and rows whose runs vary in length. About 30M nonzeros each.

    python3 make_held_out_37.py DIR [NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "cpu-2026-12-05-session38"))
import make_held_out_30 as thirtieth  # noqa: E402

gen, local_runs, block_rows, twelve = thirtieth.gen, thirtieth.local_runs, thirtieth.block_rows, thirtieth.twelve
gen.RNG = np.random.default_rng(4437)
twelve.gen.RNG = gen.RNG


def mixed_runs(n: int, per_row: int, lengths: tuple[int, int], reach: int):
    """Rows of ``per_row`` runs whose lengths are drawn from lengths[0]..lengths[1] (each run's own),
    each run's start within +-reach of the diagonal; runs that overlap merge."""
    def build():
        rows = np.repeat(np.arange(n, dtype=np.int64), per_row)
        widths = gen.RNG.integers(lengths[0], lengths[1] + 1, rows.size)
        starts = np.clip(rows + gen.RNG.integers(-reach, reach + 1, rows.size), 0, n - lengths[1])
        within = np.arange(widths.sum()) - np.repeat(np.cumsum(widths) - widths, widths)
        return twelve._coo(np.repeat(rows, widths), np.repeat(starts, widths) + within, (n, n))
    return build


THIRTY_SEVENTH = {
    # below the cut: auto keeps staged
    "runs-5x5-local-3000": local_runs(1_200_000, 5, 5, 3000),
    "blocks-5x5-5": block_rows(240_000, 5, 5, 40),
    # at and above it
    "runs-4x7-local-3000": local_runs(1_100_000, 4, 7, 3000),
    "runs-3x8-local-10000": local_runs(1_250_000, 3, 8, 10_000),
    "runs-3x10-scattered": local_runs(1_000_000, 3, 10, 1_000_000),
    "blocks-7x7-4": block_rows(150_000, 7, 4, 40),
    "blocks-8x8-4": block_rows(120_000, 8, 4, 60),
    "mixed-4-12x3-local-5000": mixed_runs(1_250_000, 3, (4, 12), 5000),
}


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or THIRTY_SEVENTH, THIRTY_SEVENTH)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
