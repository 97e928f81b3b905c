"""A fifteenth held-out set, written in session 24 after set 14 and the re-run of three stale
held-out matrices, before any run of it. The rule change taken from set 14 (bitmap_rows: irregular
rows of at most segmented_mean on average with no empty row run segmented at any size) lost in
float64 on 6 of the 7 such matrices of large_nnz and more that any run has timed (segmented at
0.87-0.98 of staged; the one gain, pl-hubcols, 1.03x), and gained on every one below it (1.06-1.20x).
Hypothesis H6: in float64, from large_nnz, staged is at least as fast as segmented on such rows.
Four large matrices of row-length shapes no run has used (lognormal, bimodal 2/40) over local,
scattered and hub columns, and two below large_nnz, in both dtypes; predictions in this folder's
README.

    python3 make_held_out_15.py DIR [NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "h200-2026-12-04-session19"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "h200-2026-12-04-session23"))
import make_held_out_14 as fourteen  # noqa: E402
import make_held_out_large as gen  # noqa: E402

from spla.io import generators  # noqa: E402

gen.RNG = np.random.default_rng(2415)
fourteen.gen.RNG = gen.RNG


def lognormal_lengths(n: int, mean: float, sigma: float, longest: int) -> np.ndarray:
    """Row lengths of a lognormal of this mean and sigma, at least 1 (no empty row), at most longest."""
    mu = np.log(mean) - sigma ** 2 / 2
    return np.clip(np.rint(gen.RNG.lognormal(mu, sigma, n)), 1, longest).astype(np.int64)


def bimodal_lengths(n: int, short: int, long: int, long_share: float) -> np.ndarray:
    return np.where(gen.RNG.random(n) < long_share, long, short).astype(np.int64)


def local_rows(lengths_of):
    def build():
        lengths = lengths_of()
        seed = int(gen.RNG.integers(1 << 31))
        return generators._local_graph(lengths, lengths.size, seed, np.float64).to_scipy()
    return build


def scattered_rows(lengths_of):
    def build():
        lengths = lengths_of()
        return gen._scattered_rows(lengths, lengths.size)
    return build


FIFTEENTH = {
    # from large_nnz (4.46M): H6's four
    "lognormal-4-local-30M": local_rows(lambda: lognormal_lengths(7_500_000, 4.0, 1.2, 2000)),
    "bimodal-2-40-scattered-24M": scattered_rows(lambda: bimodal_lengths(5_200_000, 2, 40, 0.07)),
    "pl-3.5-hubcols-12M": fourteen.hub_columns(4_000_000, 5.5, 800, exponent=1.3),
    "pl-5-local-40M": fourteen.local(8_000_000, 5.0, 2000),
    # below large_nnz: where set 14 and the re-run gained in both dtypes
    "lognormal-3-scattered-2M": scattered_rows(lambda: lognormal_lengths(700_000, 3.0, 1.4, 1500)),
    "bimodal-2-200-local-4M": local_rows(lambda: bimodal_lengths(850_000, 2, 200, 0.015)),
}


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or FIFTEENTH, FIFTEENTH)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
