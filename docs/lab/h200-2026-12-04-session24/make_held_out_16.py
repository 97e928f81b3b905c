"""A sixteenth held-out set, written in session 24 after set 15, before any run of it. In float32
from large_nnz, segmented's bitmap rows (bitmap_rows) ran at 0.90-0.91 of staged on the two runs
whose rows average exactly 5 (pl-5-local-40M, set 15; the power law of set 7) and at 0.95-1.32 of
staged on the eight averaging 2.95-4.66. Hypothesis H7: in float32 from large_nnz, staged is at least
as fast as segmented on such rows averaging 4.8-5.37, segmented at least as fast below 4.6. Four
matrices on each side, over local, scattered and hub columns; predictions in this folder's README.

    python3 make_held_out_16.py DIR [NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_held_out_15 as fifteen  # noqa: E402

fifteen.gen.RNG = np.random.default_rng(2416)
fourteen = fifteen.fourteen
lognormal, bimodal = fifteen.lognormal_lengths, fifteen.bimodal_lengths

SIXTEENTH = {
    # rows of 4.8-5.37 on average (staged predicted ahead in float32)
    "lognormal-5.2-local-20M": fifteen.local_rows(lambda: lognormal(3_900_000, 5.2, 1.1, 1500)),
    "pl-5.1-scattered-20M": fourteen.scattered(3_900_000, 5.1, 600),
    "pl-hubcols-high": fourteen.hub_columns(3_000_000, 7.5, 1000, exponent=1.2),
    "bimodal-3-50-local-25M": fifteen.local_rows(lambda: bimodal(4_900_000, 3, 50, 0.044)),
    # rows of 3.5-4.6 on average (segmented predicted ahead in float32)
    "lognormal-4.4-scattered-20M": fifteen.scattered_rows(lambda: lognormal(4_500_000, 4.4, 1.3, 1500)),
    "pl-3.8-local-25M": fourteen.local(6_600_000, 3.8, 800),
    "pl-hubcols-low": fourteen.hub_columns(3_700_000, 6.2, 1000, exponent=1.4),
    "bimodal-2-24-local-20M": fifteen.local_rows(lambda: bimodal(4_300_000, 2, 24, 0.12)),
}


def main(argv) -> int:
    fifteen.gen.write(Path(argv[0]), argv[1:] or SIXTEENTH, SIXTEENTH)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
