"""A twenty-second held-out set, written in session 26 after call 4 and before any run of it, for
hypothesis M1 (predictions in this folder's README): large regular rows whose neighbouring columns
are close in 25-50% of pairs (auto's medium class today: vector) run faster with staged since it
sums rows of up to 128 by thread. Local rows of several lengths and short reaches, a 27-point
stencil shuffled within small windows, and two controls above a near share of 0.5 (runs of
consecutive columns).

    python3 make_held_out_22.py DIR [NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_held_out_20 as twentieth  # noqa: E402

gen, twelve = twentieth.gen, twentieth.twelve
gen.RNG = np.random.default_rng(2622)
twelve.gen.RNG = gen.RNG


def local(n: int, lo: int, hi: int, reach: int):
    return lambda: twelve.long_local(n, lo, hi, reach)


def local_runs(n: int, runs, width: int, reach: int, align: int = 1):
    """Rows of ``runs`` runs (a number, or (lo, hi) drawn per row) of ``width`` consecutive
    columns, each run's start within +-reach of the diagonal and rounded down to a multiple of
    ``align`` (1: anywhere; session 38's set 30 added the range and ``align``, which leave this
    set's matrices as they were). Runs that overlap merge, so a few rows come out shorter."""
    def build():
        per = np.full(n, runs) if np.isscalar(runs) else gen.RNG.integers(runs[0], runs[1] + 1, n)
        rows = np.repeat(np.arange(n, dtype=np.int64), per)
        starts = np.clip(rows + gen.RNG.integers(-reach, reach + 1, rows.size), 0, n - width)
        starts -= starts % align
        cols = (starts[:, None] + np.arange(width)).ravel()
        return twelve._coo(np.repeat(rows, width), cols, (n, n))
    return build


TWENTY_SECOND = {
    "rows-20-30-local-250": local(1_600_000, 20, 30, 250),
    "rows-60-80-local-700": local(550_000, 60, 80, 700),
    "rows-120-180-local-1800": local(260_000, 120, 180, 1800),
    "rows-10-16-local-100": local(3_000_000, 10, 16, 100),
    "rows-30-40-local-300": local(1_100_000, 30, 40, 300),
    "rows-48-exactly-local-400": local(800_000, 48, 48, 400),
    "stencil27-shuffled-64": lambda: twentieth.stencil27_window_shuffled(115, 64),
    "runs-4x8-local-3000": local_runs(1_200_000, 4, 8, 3000),
    "runs-2x16-local-1000": local_runs(1_200_000, 2, 16, 1000),
}


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or TWENTY_SECOND, TWENTY_SECOND)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
