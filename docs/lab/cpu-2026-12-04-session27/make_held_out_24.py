"""A twenty-fourth held-out set, written in session 27 (no device machine was lent) with its
prediction in this folder's README, for hypothesis S1: auto should look for dia and band by the
rows a matrix has, not by its nonzeros. Today both are considered from 2^20 nonzeros
(spla/planning/structured.py, AUTO_MIN_NNZ, set from the kernels' design); the corpus's stencils
and bands at 300k-1M nonzeros ran dia 1.02-1.38x and band 1.14-1.18x the best CSR kernel from
about 41,000 and 17,000 rows, and lost below (dia 0.51-0.71 at 9,000-12,000 rows). Small matrices of
shapes that are in no corpus family: 1-D three- and five-point operators, a 2-D 13-point and a 3-D
19-point stencil, a 2-D 7-point (triangular-grid) stencil, a 3-D 7-point one on a flat box, bands
of fixed and random width, and two controls below the cuts. All under 2^20 nonzeros.

    python3 make_held_out_24.py DIR [NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

LAB = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(LAB / "h200-2026-12-04-session19"))
sys.path.insert(0, str(LAB / "h200-2026-12-04-session23"))
import make_held_out_12 as twelve  # noqa: E402
import make_held_out_large as gen  # noqa: E402

gen.RNG = np.random.default_rng(2724)
twelve.gen.RNG = gen.RNG


def line(n: int, reach: int):
    """The 1-D operator of the 2 * reach + 1 points around each point."""
    return lambda: gen._stencil((n,), [(o,) for o in range(-reach, reach + 1)])


def stencil13_2d(n: int):
    return lambda: gen.stencil13_2d(n)


def stencil19_3d(n: int):
    return lambda: gen.stencil19_3d(n)


def triangular_grid(n: int):
    """The 2-D 7-point stencil of a triangular grid: the 4 neighbours, two diagonal ones, itself."""
    return lambda: gen._stencil((n, n), [(0, 0), (0, 1), (0, -1), (1, 0), (-1, 0), (1, 1), (-1, -1)])


def flat_box(nx: int, ny: int, nz: int):
    """The 3-D 7-point stencil on an nx x ny x nz box (a thin slab: other diagonal offsets than a cube's)."""
    offs = [(0, 0, 0), (1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)]
    return lambda: gen._stencil((nx, ny, nz), offs)


def band(n: int, width: int):
    """Row i: the width columns from i - width // 2 (clipped to the matrix), one contiguous run."""
    def build():
        starts = np.clip(np.arange(n, dtype=np.int64) - width // 2, 0, n - width)
        rows = np.repeat(np.arange(n, dtype=np.int64), width)
        cols = (starts[:, None] + np.arange(width)).ravel()
        return sp.csr_matrix((gen._values(rows.size), (rows, cols)), shape=(n, n))
    return build


TWENTY_FOURTH = {
    # S1 moves these to dia (rows from 41,000; today: scalar, warp or vector)
    "line3-300k": line(300_000, 1),
    "line5-180k": line(180_000, 2),
    "stencil13-2d-240": stencil13_2d(240),
    "stencil19-3d-36": stencil19_3d(36),
    "triangular-grid-300": triangular_grid(300),
    "flat-box-120x120x5": flat_box(120, 120, 5),
    # ... and these to band (rows from 16,700; too few rows for dia)
    "band-20-40k": band(40_000, 20),
    "triangular-band-40-35k": lambda: twelve.triangular_band(35_000, 40),
    # controls below the cuts: S1 keeps the code's pick
    "stencil19-3d-28": stencil19_3d(28),
    "band-24-10k": band(10_000, 24),
}


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or TWENTY_FOURTH, TWENTY_FOURTH)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
