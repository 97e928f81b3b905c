"""A forty-second held-out set, written in session 48 after set 41's run and before any run of this one: the test of
B1, whether float32 rle at 2 lanes loses where its rows' values start on one L1 bank (this folder's README). Rows of
exactly L entries in two runs, in disjoint halves of a window around the diagonal (no two runs merge, so every row
holds L), for L from 28 to 96. About 30M nonzeros each; every name is new.

    python3 make_held_out_42.py DIR [NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "cpu-2026-12-05-session44"))
import make_held_out_37 as thirty_seventh  # noqa: E402

gen, twelve = thirty_seventh.gen, thirty_seventh.twelve
gen.RNG = np.random.default_rng(4842)
twelve.gen.RNG = gen.RNG


def exact_runs(n: int, widths: tuple[int, int], reach: int):
    """Rows of two runs of widths[0] and widths[1] columns: the first starting within reach columns left of the
    diagonal, the second within reach columns right of it, so the two never meet and every row holds their sum."""
    def build():
        rows = np.arange(n, dtype=np.int64)
        left = np.clip(rows - widths[0] - gen.RNG.integers(0, reach + 1, n), 0, None)
        right = np.clip(rows + 1 + gen.RNG.integers(0, reach + 1, n), widths[0], n - widths[1])
        left = np.minimum(left, right - widths[0])  # rows near either end: keep the runs apart
        cols = np.concatenate([left[:, None] + np.arange(widths[0]), right[:, None] + np.arange(widths[1])], axis=1)
        return twelve._coo(np.repeat(rows, sum(widths)), cols.ravel(), (n, n))
    return build


def _sized(length: int) -> int:
    return 30_000_000 // length


FORTY_SECOND = {f"exact-{a + b}-as-{a}+{b}": exact_runs(_sized(a + b), (a, b), 2500)
                for a, b in ((14, 14), (15, 15), (15, 16), (16, 16), (16, 17), (18, 18), (20, 20), (24, 24),
                             (28, 28), (32, 32), (48, 48))}


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or FORTY_SECOND, FORTY_SECOND)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
