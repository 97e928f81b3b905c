"""A forty-sixth held-out set, written in session 49 before any run of it: the test of band's float32 rotated
value loads (spla_spmv_band_rotated, run where spla.planning.banks.rotates says; this folder's README). Every row
is one run of consecutive columns (band's matrices): rows of one length that start on one L1 bank (16, 32, 48,
64, 96, 128 entries) and that do not (33, 40), lengths that alternate, random widths at 2, 4 and 8 lanes, and rows
of 256 (16 lanes, never rotated). About 28M nonzeros each; every name is new.

    python3 make_held_out_46.py DIR [NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "h200-2026-12-04-session19"))
import make_held_out_large as gen  # noqa: E402

gen.RNG = np.random.default_rng(4946)
NNZ = 28_000_000


def band_rows(lengths, first, n_cols: int) -> sp.csr_matrix:
    """Row r: columns first[r], ..., first[r] + lengths[r] - 1."""
    lengths = np.asarray(lengths, dtype=np.int64)
    first = np.clip(np.asarray(first, dtype=np.int64), 0, n_cols - lengths)
    indptr = np.concatenate(([0], np.cumsum(lengths)))
    within = np.arange(indptr[-1]) - np.repeat(indptr[:-1], lengths)
    return sp.csr_matrix((gen._values(int(indptr[-1])), np.repeat(first, lengths) + within, indptr),
                         shape=(lengths.size, n_cols))


def fixed(length: int, reach: int | None = None):
    """Rows of ``length`` entries, row r's from about r - length / 2 (a diagonal band), or from a random
    column within +-reach of it, or anywhere (reach 0)."""
    def build():
        n = NNZ // length
        first = np.arange(n) - length // 2
        if reach:
            first = first + gen.RNG.integers(-reach, reach + 1, n)
        elif reach == 0:
            first = gen.RNG.integers(0, n - length, n)
        return band_rows(np.full(n, length), first, n)
    return build


def drawn(lengths_of):
    """Rows of lengths drawn by ``lengths_of(rng, n)`` around the diagonal."""
    def build():
        probe = lengths_of(gen.RNG, 1000)
        n = int(NNZ / probe.mean())
        lengths = lengths_of(gen.RNG, n)
        return band_rows(lengths, np.arange(n) - lengths // 2, n + int(lengths.max()))
    return build


FORTY_SIXTH = {
    # rows that start on one bank at the plan's width (band_lanes): rotated
    "band-16-diag": fixed(16),
    "band-32-diag": fixed(32),
    "band-32-local-4000": fixed(32, 4000),
    "band-32-scattered": fixed(32, 0),
    "band-48-diag": fixed(48),
    "band-64-diag": fixed(64),
    "band-96-local-2000": fixed(96, 2000),
    "band-128-diag": fixed(128),
    "alternating-24-40": drawn(lambda rng, n: np.where(np.arange(n) % 2 == 0, 24, 40)),
    "mostly-32-some-8": drawn(lambda rng, n: np.where(rng.random(n) < 0.9, 32, 8)),
    "random-100-160": drawn(lambda rng, n: rng.integers(100, 161, n)),  # 8 lanes: random starts pile 2 of 4
    # rows that do not pile: the plain entry
    "band-33-diag": fixed(33),
    "band-40-local-4000": fixed(40, 4000),
    "random-20-44": drawn(lambda rng, n: rng.integers(20, 45, n)),
    "random-48-80": drawn(lambda rng, n: rng.integers(48, 81, n)),
    "band-256-diag": fixed(256),  # 16 lanes: never rotated
}


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or FORTY_SIXTH, FORTY_SIXTH)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
