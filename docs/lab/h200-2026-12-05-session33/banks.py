"""Shared-memory wavefronts a warp needs in staged's row-a-thread step (a count, no GPU): 32 lanes
each sum a row of products stored back to back; at each step every lane with products left reads
one. A pass serves distinct addresses in distinct banks (32 banks of 4 bytes: 32 floats a warp's
pass, 16 doubles a half warp's). Printed: wavefronts a step over one pass's, for rows of one
length and rows of random lengths, read from the row's start ("plain") and from staged's bank
offset (kernels/spmv_staged.cu, staged_bank_offset).

    python3 banks.py
"""

from __future__ import annotations

import numpy as np


def wavefronts(starts, lengths, offsets, banks: int) -> float:
    """Mean wavefronts a step (1.0: no conflict) over the steps of the longest row."""
    total = 0
    for step in range(lengths.max()):
        for first in range(0, 32, banks):  # a pass: 32 lanes (floats) or 16 (doubles)
            seen: dict[int, set] = {}
            for lane in range(first, first + banks):
                if step < lengths[lane]:
                    address = starts[lane] + (step + offsets[lane]) % lengths[lane]
                    seen.setdefault(address % banks, set()).add(address)
            total += max((len(a) for a in seen.values()), default=0)
    return total / lengths.max() / (32 // banks)


def bank_offsets(lengths, banks: int) -> np.ndarray:
    """staged_bank_offset for each lane's row."""
    log_banks = banks.bit_length() - 1
    out = []
    for lane, length in enumerate(lengths):
        twos = min((int(length) & -int(length)).bit_length() - 1, log_banks)
        out.append(0 if twos < 0 else (lane % banks) >> (log_banks - twos))
    return np.array(out)


def main() -> None:
    rng = np.random.default_rng(0)
    for dtype, banks in (("float32", 32), ("float64", 16)):
        print(dtype)
        for length in (2, 4, 7, 8, 12, 15, 16, 18, 24, 27, 31, 32, 33, 48, 64, 96, 100, 128):
            lengths = np.full(32, length)
            starts = np.arange(32) * length + 5
            plain = wavefronts(starts, lengths, np.zeros(32, int), banks)
            offset = wavefronts(starts, lengths, bank_offsets(lengths, banks), banks)
            print(f"  rows of {length:3d}: plain {plain:5.2f}  bank offset {offset:5.2f}")
        for lo, hi in ((2, 9), (8, 12), (20, 30), (30, 40), (90, 130), (1, 200)):
            plain = offset = 0.0
            for _ in range(20):
                lengths = rng.integers(lo, hi + 1, 32)
                starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
                plain += wavefronts(starts, lengths, np.zeros(32, int), banks) / 20
                offset += wavefronts(starts, lengths, bank_offsets(lengths, banks), banks) / 20
            print(f"  rows of {lo}-{hi}: plain {plain:5.2f}  bank offset {offset:5.2f}")


if __name__ == "__main__":
    main()
