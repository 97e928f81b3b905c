"""Fresh set 67 (session 55), written before any run of it: the top of issue 17's size range (10M-200M nonzeros),
where sets 65-66 stopped at 56M. Seven matrices of about 100-160M nonzeros from the held-out classes: a 27-point
stencil, an R-MAT graph of scale 24, bimodal rows, a band of random width, a short-wide rectangle, a uniform graph
and a transposed power law.

    python3 make_fresh_67.py DIR [NAME...]
"""

from __future__ import annotations

import sys
from multiprocessing import Pool
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import make_fresh_66 as f66  # noqa: E402  (its make() seeds a name's generator and writes DIR/name.npz)
from make_fresh_66 import f65, gen, rows  # noqa: E402

SET_67 = {
    "stencil27-3d-180": lambda: gen._stencil((180, 180, 180), f66.ALL_27),
    "rmat-24-8-graph500": lambda: gen.rmat(24, 8, (0.57, 0.19, 0.19, 0.05)),
    "bimodal-4-100-8M": rows(lambda: np.where(gen.RNG.random(8_000_000) < 0.9, 4, 100), 8_000_000),
    "banded-random-20-80": lambda: gen.banded_random(3_000_000, 20, 80),
    "short-wide-2000x40M": lambda: gen.short_wide(2000, 40_000_000, 50_000),
    "uniform-graph-30M-deg4": f66.from_65(f65.skewed_graph, 30_000_000, 4, 0.0),
    "powerlaw-transposed-20M-6": lambda: gen.powerlaw_transposed(20_000_000, 6),
}

if __name__ == "__main__":
    f66.SET_66.update(SET_67)  # make() looks names up there
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    names = sys.argv[2:] or list(SET_67)
    with Pool(min(8, len(names))) as pool:
        for line in pool.imap_unordered(f66.make, [(n, out) for n in names]):
            print(line, flush=True)
