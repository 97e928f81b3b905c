"""Set 53, written in session 50 before any run of it: a broad held-out set for issue 17's large target as the
code stands (auto beside the lean cuSPARSE pair, both dtypes). Fourteen matrices of 10-45M nonzeros from the
families of the issue's held-out classes, each with parameters no earlier set used, on a seed of its own: stencils of
random coefficients (dia's values, no palette), an R-MAT graph, bimodal rows, bands of random width, a kNN window,
a transposed power law, a circuit-like matrix with dense rows, a Kronecker product, rows of 4-60 over 1.5M columns
and of 14-22 over 80k, rows of five short runs, and two extreme rectangles.

    python3 make_held_out_53.py DIR [NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "h200-2026-12-04-session19"))
sys.path.insert(0, str(HERE.parent / "h100-2026-12-06-session49"))
import make_held_out_large as gen  # noqa: E402
import make_zone_49 as zone  # noqa: E402

gen.RNG = np.random.default_rng(5350)  # make_zone_49's knn and short_runs draw from gen.RNG too


def rows(low: int, high: int, n_rows: int, n_cols: int):
    """Rows of low..high distinct random columns."""
    return lambda: gen._scattered_rows(gen.RNG.integers(low, high + 1, n_rows), n_cols)


SET_53 = {
    "stencil19-3d-110": lambda: gen.stencil19_3d(110),
    "stencil13-2d-1500": lambda: gen.stencil13_2d(1500),
    "rmat-62-15-15-8": lambda: gen.rmat(20, 20, (0.62, 0.15, 0.15, 0.08)),
    "bimodal-6-80": lambda: gen._scattered_rows(np.where(gen.RNG.random(1_200_000) < 0.7, 6, 80), 1_200_000),
    "banded-random-10-70": lambda: gen.banded_random(800_000, 10, 70),
    "knn-9-window-20k": lambda: gen.knn_window(2_500_000, 9, 20_000),
    "powerlaw-transposed-6": lambda: gen.powerlaw_transposed(3_000_000, 6),
    "circuit-3M-40x25k": lambda: gen.circuit_like(3_000_000, 40, 25_000),
    "kron-400x4000": lambda: gen.kron_random(400, 5, 4000, 5),
    "rows-4-60-over-1.5M": rows(4, 60, 700_000, 1_500_000),
    "rows-14-22-over-80k": rows(14, 22, 1_500_000, 80_000),
    "runs-5x4-w100k-20M": zone.short_runs(5, 4, 100_000, 20e6),
    "short-wide-800x10M": lambda: gen.short_wide(800, 10_000_000, 20_000),
    "tall-skinny-12Mx4000": rows(1, 4, 12_000_000, 4000),
}


if __name__ == "__main__":
    gen.write(Path(sys.argv[1]), sys.argv[2:] or SET_53, SET_53)
