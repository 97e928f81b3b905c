"""Rows made of runs of consecutive columns: SpMV with the column indices run-length encoded.

Dense blocks (a node's several unknowns, block-sparse matrices), rows of a few
bands and other rows whose columns come in runs ``c, c + 1, ..., c + L - 1``
store L column indices where one first column says the same. The ``rle``
kernel (kernels/spmv_rle.cu) reads, in place of an index a nonzero, a first
column and a first entry a run (:class:`Structure`): 8 bytes a run against 4
a nonzero, so on runs of 8 about 0.63x CSR's bytes of matrix in float32 and
0.75x in float64. ``band`` is the special case of one run a row, and reads
less again (no run arrays); ``dia`` reads no column at all where the runs line
up into diagonals. ``auto`` tries them first.

The encoding is exact for any CSR matrix (a lone entry is a run of one; rows
need not be sorted), so ``kernel="rle"`` runs on every matrix. What auto
weighs is whether the runs pay: from :data:`AUTO_MIN_RUN` entries a run on
average (measured: on shorter runs a lane's walk over them costs what their
bytes save); the tuner times rle from shorter runs (:data:`TUNE_MIN_RUN`).
Its products are the ``warp`` kernel's at the same lanes, bit for bit (one
mapping, one order of the sums), and it takes the same ``:LANES`` parameter.

Detection (:func:`structure`) is a few array passes over the indices where A
lives (:func:`spla.csr_passes.column_runs`: NumPy or CuPy), cached on A;
``auto`` first reads the share of consecutive neighbours off the row sample it
already takes (:func:`~spla.planning.stats.run_share`), so matrices of
scattered columns cost no pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import csr_passes
from . import structured
from .stats import run_share
from .structured import Refusal

__all__ = ["AUTO_MIN_NNZ", "AUTO_MIN_ROWS", "AUTO_MIN_RUN", "NEEDS", "TUNE_MIN_RUN", "Refusal", "Structure", "applies",
           "auto_considers", "describe", "min_run_share", "structure"]

#: What ``kernel="rle"`` asks of a matrix (its error's text: only running out of memory refuses it).
NEEDS = "room on the device for its runs (8 bytes a run of consecutive columns)"

#: ``auto`` runs rle where runs average at least this many entries. The byte model put it at 4 (the
#: runs' 8 bytes at most half of the indices' 4 a nonzero). Held-out set 36 (H100, session 44) moved it
#: to 6.5 and fresh set 37 (H200, session 45) to 12: every lane of a row walks every run of it, a load
#: waiting on the one before, and on short runs that walk costs what their bytes save. Fresh set 38
#: (H200, session 46) did not bear 12 out: runs of 12-13 ran rle at 0.84-1.15x staged, three of five
#: below 1 in float64. By the rule written before its run (docs/lab/h200-2026-12-06-session46/README.md,
#: D2) the cut is the shortest mean run from which every matrix timed on the H200 (sets 30, 36, 37 and
#: 38) keeps rle at 0.98x staged or better with a geomean of 1.03x: runs of 16-32 ran it at 1.02-1.34x,
#: in both dtypes. Read off those sets, then tested on fresh set 39 (H100, session 47): where auto ran
#: rle, 1.14x / 1.15x staged on the geomean, worst 0.809 in float32 (runs-2x16, from its width) and 1.005
#: in float64.
AUTO_MIN_RUN = 16.0

#: The tuner times rle from runs this long (and keeps a cached rle winner from them): the byte
#: model's cut. It measures, so it looks wherever the bytes may pay: rle beat staged on some matrices
#: of runs of 4.5-10.5 (set 38: blocks of 4 in float64 1.09x, blocks of 10 1.07-1.17x).
TUNE_MIN_RUN = 4.0


def min_run_share(min_run: float) -> float:
    """The share of sampled neighbours that must be consecutive before the runs are read, for a cut
    of ``min_run``: runs of half the cut pass it, so sampling noise does not hide longer ones, and a
    matrix of scattered columns costs no pass."""
    return 1.0 - 2.0 / min_run


#: ... and auto reads the full runs only where this share of the sampled neighbours are consecutive.
AUTO_MIN_RUN_SHARE = min_run_share(AUTO_MIN_RUN)

#: ``auto`` looks for runs from as many rows as for bands (a row group a row: fewer leave the GPU idle) ...
AUTO_MIN_ROWS = 16_700
#: ... and from this many nonzeros: only matrices of 25-36M (held-out sets 30 and 36-38) are timed; below
#: the issue's large matrices auto keeps CSR's kernels (the tuner still times rle there).
AUTO_MIN_NNZ = 10**7


@dataclass(frozen=True, eq=False)
class Structure:
    """A's runs, in A's index dtype on A's side: ``run_ptr`` (rows + 1) the first run of each row,
    ``run_start`` (runs + 1) the entry where each run starts, then nnz, and ``run_col`` (runs) its
    first column."""

    run_ptr: Any
    run_start: Any
    run_col: Any

    @property
    def n_runs(self) -> int:
        return int(self.run_col.shape[0])


def structure(A) -> Structure | Refusal:
    """A's runs (cached on A)."""
    return structured.cached(A, "rle", _detect)  # type: ignore[return-value]


def describe(found: Structure) -> str:
    """What ``spla info`` says of A's runs."""
    mean = found.run_start[-1] / found.n_runs if found.n_runs else 0.0
    return f"{found.n_runs:,} runs of consecutive columns ({float(mean):.1f} entries a run)"


def _detect(xp, A) -> Structure | Refusal:
    # at most (rows + 1) + 2 (nnz + 1) indices kept, and a flag and a position a nonzero while counting
    if not structured.fits(xp, (A.n_rows + 2 * A.nnz + 3) * A.indices.dtype.itemsize + 9 * A.nnz):
        return Refusal("its runs would not fit in the device memory that is free")
    return Structure(*csr_passes.column_runs(A))


def mean_run(A) -> float:
    """Entries a run of A on average (0 for a matrix with none); finds the runs."""
    found = structure(A)
    return A.nnz / found.n_runs if isinstance(found, Structure) and found.n_runs else 0.0


def auto_considers(stats) -> bool:
    """Whether ``auto`` looks for runs in a matrix of these row statistics: rows enough
    (:data:`AUTO_MIN_ROWS`) and nonzeros enough (:data:`AUTO_MIN_NNZ`), rows that average at least
    a run of :data:`AUTO_MIN_RUN`."""
    return stats.n_rows >= AUTO_MIN_ROWS and stats.nnz >= AUTO_MIN_NNZ and stats.mean >= AUTO_MIN_RUN


def applies(A, stats=None, min_run: float | None = None) -> bool:
    """Whether A's runs pay: the sampled neighbours consecutive often enough, then runs of at least
    ``min_run`` on average (default :data:`AUTO_MIN_RUN`, auto's; the tuner asks from
    :data:`TUNE_MIN_RUN`). ``stats`` is unused."""
    cut = AUTO_MIN_RUN if min_run is None else min_run
    return A.nnz > 0 and run_share(A) >= min_run_share(cut) and mean_run(A) >= cut
