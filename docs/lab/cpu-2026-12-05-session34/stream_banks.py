"""Shared-memory wavefronts in adaptive/adaptive2's stream blocks (a count, no GPU).

A stream block stages its rows' products back to back in shared memory, then groups of `width`
lanes (the plan's choice) sum a row each: at step s, lane l of a group reads its row's product
l + s * width. Rows of one length L start L apart, so groups of a warp start in banks g * L mod
32 (float32; 16 doubles a half warp's pass): the conflict staged had (session 33), now per group.
For each sampled stream block of a matrix's adaptive2 plan this counts the wavefronts of the sum
loop against one a step and a pass, and, for the same block, with each group's start rotated as
`rotation` below (a candidate fix; the sum wraps to the row's start as staged's does).

    PYTHONPATH=. python3 stream_banks.py [--blocks 400] SOURCE...

Printed per matrix: the share of nonzeros in stream blocks, the width mix, wavefronts a step
over the ideal (plain, rotated), and the sum loop's wavefronts over the staging loop's (how much
of a stream block's shared-memory work the sum is: the staging writes one wavefront a warp's
32 products, plus the gathers, which this does not count).
"""

from __future__ import annotations

import argparse
import collections

import numpy as np
import scipy.sparse as sp

from spla.bench import corpus
from spla.csr import CSRMatrix
from spla.planning import adaptive


def rotation(lengths: np.ndarray, group: np.ndarray, width: int, banks: int) -> np.ndarray:
    """Where each group starts in its row (the candidate fix): staged_bank_offset with a group of
    `width` lanes as the unit. A pass holds banks / width groups; rows of a length with t factors
    of two start in one bank every banks / 2^t groups, so group g moves on by
    (g >> (log2(banks) - t)) windows of `width`: rows of one length then fill distinct banks."""
    log_banks = banks.bit_length() - 1
    twos = np.full(lengths.shape, -1)
    nonzero = lengths > 0
    twos[nonzero] = np.log2(lengths[nonzero] & -lengths[nonzero]).astype(int)
    twos = np.minimum(twos, log_banks)
    in_pass = group % max(banks // width, 1)
    return np.where(twos < 0, 0, (in_pass >> (log_banks - np.maximum(twos, 0))) * width)


def block_wavefronts(offsets: np.ndarray, width: int, banks: int, rotate: bool) -> tuple[int, int]:
    """(wavefronts, ideal) of one stream block's sum loop; offsets: its rows' starts and the end."""
    starts, lengths = offsets[:-1], np.diff(offsets)
    n_rows, threads = starts.size, 256
    n_groups = threads // width
    waves = ideal = 0
    for first in range(0, n_rows, n_groups):
        rows = np.arange(first, min(first + n_groups, n_rows))
        group = rows - first
        length, start = lengths[rows], starts[rows]
        off = rotation(length, group, width, banks) if rotate else np.zeros_like(length)
        steps = int(np.max(-(-length // width), initial=0))
        for s in range(steps):
            pos = np.arange(width)[None, :] + s * width  # a group's lanes at step s
            live = pos < length[:, None]
            address = start[:, None] + (pos + off[:, None]) % np.maximum(length[:, None], 1)
            thread = group[:, None] * width + np.arange(width)[None, :]
            passes = thread // banks  # 32 floats a warp's pass, 16 doubles a half warp's
            for p in np.unique(passes[live]):
                here = live & (passes == p)
                a = np.unique(address[here])
                ideal += 1
                waves += int(np.bincount(a % banks).max())
    return waves, ideal


def _rows(source: str):
    """``rows:N:L1,L2,...``: N rows of lengths cycling through the list, random columns in N."""
    _, n, lengths = source.split(":")
    n, cycle = int(n), [int(v) for v in lengths.split(",")]
    lengths = np.resize(np.array(cycle), n)
    rng = np.random.default_rng(1)
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    indices = np.sort(rng.integers(0, n, size=(indptr[-1],))).astype(np.int32)  # order within rows is all that counts
    return CSRMatrix.from_scipy(sp.csr_matrix((np.ones(indptr[-1]), indices, indptr), shape=(n, n)))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("sources", nargs="+")
    parser.add_argument("--blocks", type=int, default=400, help="stream blocks sampled a matrix")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'matrix':<40} {'nnz':>10} {'stream':>6}  {'widths (share of stream nnz)':<34} "
          f"{'f32 plain':>9} {'rotated':>7} {'f64 plain':>9} {'rotated':>7}")
    for source in args.sources:
        A = _rows(source) if source.startswith("rows:") else corpus.load(source)
        plan = adaptive.plan2_for(A)
        indptr = np.asarray(A.indptr, dtype=np.int64)
        blocks = plan.blocks[:plan.n_main_blocks]
        stream = blocks[(blocks[:, 2] > 0) & (blocks[:, 2] <= 32)]
        nnz = indptr[stream[:, 1]] - indptr[stream[:, 0]]
        share = nnz.sum() / max(A.nnz, 1)
        mix = collections.Counter()
        for w, n in zip(stream[:, 2], nnz):
            mix[int(w)] += int(n)
        mix_text = " ".join(f"{w}:{n / max(nnz.sum(), 1):.2f}" for w, n in sorted(mix.items()))
        pick = rng.choice(stream.shape[0], min(args.blocks, stream.shape[0]), replace=False) if stream.size else []
        cells = []
        for banks in (32, 16):
            for rotate in (False, True):
                waves = ideal = 0
                for i in pick:
                    b = stream[i]
                    offsets = indptr[b[0]:b[1] + 1] - indptr[b[0]]
                    w, d = block_wavefronts(offsets, int(b[2]), banks, rotate)
                    waves, ideal = waves + w, ideal + d
                cells.append(waves / max(ideal, 1))
        print(f"{source[-40:]:<40} {A.nnz:>10,} {share:>6.2f}  {mix_text:<34} "
              f"{cells[0]:>9.2f} {cells[1]:>7.2f} {cells[2]:>9.2f} {cells[3]:>7.2f}", flush=True)


if __name__ == "__main__":
    main()
