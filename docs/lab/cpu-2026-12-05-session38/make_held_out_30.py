"""A thirtieth held-out set, written in session 38 before any run of it, for hypothesis M3
(predictions in this folder's README): large regular rows of 13-128 entries whose neighbouring
columns are mostly consecutive (near share at least 0.45: auto's medium class, vector) run faster
with staged, now that staged's row sums read distinct banks (session 33). Eight matrices of rows
made of runs of consecutive columns at unaligned starts (M3a), and three whose runs are whole
16-byte packs at aligned starts (M3b: vector's best case, the controls).

    python3 make_held_out_30.py DIR [NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "h200-2026-12-05-session26"))
import make_held_out_22 as twenty_second  # noqa: E402

gen, twelve, local_runs = twenty_second.gen, twenty_second.twelve, twenty_second.local_runs
gen.RNG = np.random.default_rng(3830)
twelve.gen.RNG = gen.RNG


def block_rows(n_blocks: int, block: int, per_row: int, reach: int):
    """Dense block x block blocks, per_row distinct ones a block row within +-reach block columns
    of the diagonal: every row of a block row has the same columns, whole aligned runs of block."""
    def build():
        # draw twice as many block columns a block row, keep the first per_row distinct ones
        offsets = np.sort(gen.RNG.integers(-reach, reach + 1, (n_blocks, 2 * per_row)), axis=1)
        keep = np.ones(offsets.shape, dtype=bool)
        keep[:, 1:] = offsets[:, 1:] != offsets[:, :-1]
        keep &= np.cumsum(keep, axis=1) <= per_row
        block_row = np.broadcast_to(np.arange(n_blocks)[:, None], offsets.shape)[keep]
        block_col = np.clip(block_row + offsets[keep], 0, n_blocks - 1)
        inner = np.arange(block, dtype=np.int64)
        rows = np.broadcast_to((block_row * block)[:, None, None] + inner[:, None], (block_row.size, block, block))
        cols = np.broadcast_to((block_col * block)[:, None, None] + inner[None, :], (block_row.size, block, block))
        return twelve._coo(rows.ravel(), cols.ravel(), (n_blocks * block,) * 2)
    return build


THIRTIETH = {
    # M3a: runs at unaligned starts, 24-72 a row, 12-36M nonzeros
    "runs-3x8-local-2000": local_runs(1_500_000, 3, 8, 2000),
    "runs-8x4-local-1500": local_runs(1_100_000, 8, 4, 1500),
    "runs-2x24-local-6000": local_runs(700_000, 2, 24, 6000),
    "runs-5x6-local-800": local_runs(1_200_000, 5, 6, 800),
    "runs-4x16-local-20000": local_runs(500_000, 4, 16, 20000),
    "runs-6x12-local-4000": local_runs(450_000, 6, 12, 4000),
    "runs-2to6x8-local-3000": local_runs(1_100_000, (2, 6), 8, 3000),
    "runs-3x8-local-2000-12M": local_runs(500_000, 3, 8, 2000),
    # M3b: aligned whole packs (the controls)
    "aligned-runs-4x8-local-3000": local_runs(1_100_000, 4, 8, 3000, align=8),
    "blocks-4x4-6": block_rows(375_000, 4, 6, 40),
    "blocks-16x16-3": block_rows(44_000, 16, 3, 40),
}


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or THIRTIETH, THIRTIETH)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
