"""A twenty-eighth held-out set, written in session 33 before any run of it, to test M2 again with
staged's bank offsets (predictions M2a'/M2b' in this folder's README): large matrices of local
rows that auto's medium class runs on vector today. Rows of mixed lengths and of one length (even
and odd), near shares 0.25-0.45, means 16-128; two controls with rows over staged's thread cut
(128), which M2 leaves on vector.

    python3 make_held_out_28.py DIR [NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "h200-2026-12-04-session19"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_held_out_27 as s27  # noqa: E402
import make_held_out_large as gen  # noqa: E402

gen.RNG = np.random.default_rng(2833)


TWENTY_EIGHTH = {
    "rows-16-28-local-300": lambda: s27.mixed(1_800_000, 16, 28, 300),
    "rows-36-52-local-350": lambda: s27.mixed(900_000, 36, 52, 350),
    "rows-64-96-local-800": lambda: s27.mixed(480_000, 64, 96, 800),
    "rows-100-124-local-1200": lambda: s27.mixed(340_000, 100, 124, 1200),
    # rows of one length, a column in each slot of 10 (set 27's exact): near shares about 0.3
    "rows-16-exact-gap-10": lambda: s27.exact(2_400_000, 16, 10),
    "rows-32-exact-gap-10": lambda: s27.exact(1_200_000, 32, 10),
    "rows-21-exact-gap-10": lambda: s27.exact(1_800_000, 21, 10),
    "rows-48-exact-gap-9": lambda: s27.exact(800_000, 48, 9),
    "rows-160-220-local-2200": lambda: s27.mixed(200_000, 160, 220, 2200),  # control: over 128
    "rows-256-exact-gap-10": lambda: s27.exact(150_000, 256, 10),  # control: over 128
}


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or TWENTY_EIGHTH, TWENTY_EIGHTH)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
