"""A public corpus of synthetic matrix families for tuning rules and for BENCHMARKS.md.

Each family is one shape of sparsity, built at any size from a target number
of nonzeros: tiny in CPU tests, 1M-200M nnz on the GPU machine. Builds are
deterministic (a family's seed is derived from its name and ``seed``) and
vectorised; the row-by-row generators of :mod:`spla.io.generators` are reused
where they exist (stencils, power laws, R-MAT, banded, hugerows, blockdense,
random), and the new shapes fill rows through the same chunked, threaded
assembly, so memory stays near twice the CSR's size (R-MAT, which sorts its
edges, takes about 24 bytes a drawn edge).

The families are split in two halves by family, ``fit`` and ``report``
(:data:`HALVES`): rules and thresholds are fitted on the ``fit`` half only and
their figures reported on the ``report`` half, so a table says how a rule does
on shapes it was not fitted to. Every kind of shape (stencils, power laws,
R-MAT, row-length modes, bands, blocks, rectangles, irregular rows, random
columns) has a family in each half.

=====================  ======  =====================================================
family                 half    shape
=====================  ======  =====================================================
stencil5               fit     2-D 5-point Laplacian (square grid)
stencil7               report  3-D 7-point Laplacian (cube grid)
stencil9               report  2-D 9-point box stencil
stencil27              fit     3-D 27-point box stencil
stencil25              report  3-D star of radius 4 (25 points: a higher-order stencil)
powerlaw-steep         fit     power-law rows, mean 4, longest 256 (steep exponent)
powerlaw-mid           report  power-law rows, mean 8, longest 8*sqrt(n) (web-like)
powerlaw-heavy         fit     power-law rows, mean 24, longest n/16 (heavy tail)
rmat-graph500          fit     R-MAT (0.57, 0.19, 0.19, 0.05), 16 edges a vertex
rmat-skewed            report  R-MAT (0.70, 0.12, 0.12, 0.06): a few huge hubs
rmat-mild              report  R-MAT (0.45, 0.22, 0.22, 0.11): milder skew
bimodal                fit     rows of 4 or 128 nonzeros (10% long), local columns
multimodal             report  rows around 2, 12, 96 and 768 nonzeros
banded-fixed           fit     full band of half-width 16 (33 a row)
banded-random          report  contiguous rows of random width 1..64 near the diagonal
block-dense            fit     short rows plus 0.2% of rows half-dense over one column block (half the nnz)
block-sparse           report  dense 8x8 blocks, 5 a block row (FEM-like, 40 a row)
mixed-lengths          report  short rows plus 16 rows holding half the nonzeros
hub-rows               fit     short rows plus 24 rows holding 30% of the nonzeros
empty-rows             fit     90% empty rows, power-law lengths on the rest
tall-skinny            fit     rows of 8 over 512 columns
short-wide             report  rows of up to 8192 over up to 16M columns
random-uniform         fit     16 uniformly random columns a row
short-random           report  3 uniformly random columns a row
zipf-columns           fit     8 columns a row drawn with a Zipf-like skew (hot x entries)
knn-window             fit     10 columns a row within +-5,000 of the diagonal (a k-NN graph)
tiny-narrow            fit     rows of 1-4 over 2,000 columns (x stays in cache)
random-width           report  rows of 5-15 uniformly random columns (square)
random-width-60k       report  rows of 5-15 over 60,000 columns (x of 240-480 KB)
=====================  ======  =====================================================

The last four (session 19) have rows whose lengths are not whole float32 16-byte packs (10, 1-4,
5-15 entries), over x of every size: the families before them had regular rows of exactly 3, 8,
16 or 40 entries, and the held-out runs showed what that hid (vector's unaligned rows, the x size
at which the tile kernels take over).

Example
-------
>>> from spla.bench import corpus
>>> A = corpus.build("stencil27", 10_000)
>>> A.shape, A.nnz
((343, 343), 6859)
>>> [name for name, _ in corpus.corpus(5_000, half="report")][:3]
['stencil7', 'stencil9', 'stencil25']
"""

from __future__ import annotations

import itertools
import math
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from ..csr import CSRMatrix
from ..errors import InputError
from ..io import generators as gen

HALVES = ("fit", "report")
MIN_NNZ = 1000


@dataclass(frozen=True)
class Family:
    """One generator family: ``build(nnz, seed, dtype)`` makes a matrix of about ``nnz`` nonzeros."""

    name: str
    half: str  # "fit" or "report"
    kind: str  # the broad shape it stands for; every kind has a family in each half
    summary: str
    build: Callable[[int, int, np.dtype], CSRMatrix]


# ------------------------------------------------------------------ stencils
def _grid_stencil(side: int, offsets: np.ndarray, seed: int, dtype) -> CSRMatrix:
    """A stencil on a ``side``-sided grid of ``offsets.shape[1]`` dims: P on the diagonal,
    -1 at each other stencil point inside the grid (diagonally dominant)."""
    dims = offsets.shape[1]
    strides = np.array([side ** d for d in range(dims)], dtype=np.int64)
    linear = offsets @ strides
    order = np.argsort(linear)  # columns in increasing order
    offsets, linear = offsets[order], linear[order]
    centre = int(np.flatnonzero(linear == 0)[0])
    n = side ** dims

    def valid(rows):
        mask = np.ones((rows.shape[0], linear.shape[0]), dtype=bool)
        for d in range(dims):
            coordinate = (rows // strides[d]) % side
            shifted = coordinate[:, None] + offsets[None, :, d]
            mask &= (shifted >= 0) & (shifted < side)
        return mask

    lengths = np.empty(n, dtype=np.int16)
    step = 1 << 20
    for r0 in range(0, n, step):
        rows = np.arange(r0, min(n, r0 + step), dtype=np.int64)
        lengths[r0:r0 + rows.shape[0]] = valid(rows).sum(axis=1)

    def fill(r0, r1, rng):
        rows = np.arange(r0, r1, dtype=np.int64)
        mask = valid(rows)
        vals = np.full(mask.shape, -1.0)
        vals[:, centre] = float(linear.shape[0])
        return (rows[:, None] + linear[None, :])[mask], vals[mask]

    return gen._assemble(lengths, n, fill, seed, dtype, stream=20)


def _box(dims: int, radius: int = 1) -> np.ndarray:
    return np.array(list(itertools.product(range(-radius, radius + 1), repeat=dims)), dtype=np.int64)


def _star(dims: int, radius: int) -> np.ndarray:
    points = [np.zeros(dims, dtype=np.int64)]
    for d in range(dims):
        for r in range(1, radius + 1):
            for sign in (-1, 1):
                p = np.zeros(dims, dtype=np.int64)
                p[d] = sign * r
                points.append(p)
    return np.array(points)


def _side(nnz: int, points: int, dims: int) -> int:
    return max(3, int(round((nnz / points) ** (1.0 / dims))))


def _stencil5(nnz, seed, dtype):
    return gen.poisson2d(_side(nnz, 5, 2), seed=seed, dtype=dtype)


def _stencil7(nnz, seed, dtype):
    return gen.poisson3d(_side(nnz, 7, 3), seed=seed, dtype=dtype)


def _stencil9(nnz, seed, dtype):
    return _grid_stencil(_side(nnz, 9, 2), _box(2), seed, dtype)


def _stencil27(nnz, seed, dtype):
    return _grid_stencil(_side(nnz, 27, 3), _box(3), seed, dtype)


def _stencil25(nnz, seed, dtype):
    return _grid_stencil(max(9, _side(nnz, 25, 3)), _star(3, 4), seed, dtype)


# ---------------------------------------------------------------- power laws
def _powerlaw(nnz, seed, dtype, avg, max_row_of, empty_share=0.0):
    n = max(16, int(round(nnz / avg)))
    rng = np.random.default_rng(np.random.SeedSequence([seed, 21]))
    busy = n - int(empty_share * n)
    max_row = int(min(n, max(math.ceil(avg / max(busy / n, 1e-9)) + 1, max_row_of(n))))
    lengths = gen._powerlaw_lengths(n, avg, max_row, rng, empty_rows=n - busy)
    return gen._local_graph(lengths, n, seed, dtype)


def _powerlaw_steep(nnz, seed, dtype):
    return _powerlaw(nnz, seed, dtype, 4.0, lambda n: 256)


def _powerlaw_mid(nnz, seed, dtype):
    n = max(16, int(round(nnz / 8)))
    return gen.powerlaw(n, 8.0, seed=seed, dtype=dtype)


def _powerlaw_heavy(nnz, seed, dtype):
    return _powerlaw(nnz, seed, dtype, 24.0, lambda n: n // 16)


def _empty_rows(nnz, seed, dtype):
    return _powerlaw(nnz, seed, dtype, 2.0, lambda n: 512, empty_share=0.9)


# --------------------------------------------------------------------- R-MAT
def _rmat(probabilities, duplicates):
    """R-MAT at 16 edges a vertex; ``duplicates``: the share of drawn edges merged away."""
    def build(nnz, seed, dtype):
        scale = max(6, int(round(math.log2(max(nnz / (1 - duplicates) / 16, 2)))))
        return gen.rmat(scale, 16, seed=seed, dtype=dtype, probabilities=probabilities)
    return build


# ------------------------------------------------------------ row-length modes
def _modes(nnz, seed, dtype, modes, shares, jitter):
    """Rows whose lengths sit around ``modes`` (with relative ``jitter``), local columns."""
    mean = float(np.dot(modes, shares))
    n = max(64, int(round(nnz / mean)))
    n_cols = max(n, int(max(modes) * (1 + jitter)) + 1)  # square unless tiny
    rng = np.random.default_rng(np.random.SeedSequence([seed, 22]))
    mode = rng.choice(len(modes), size=n, p=np.asarray(shares) / np.sum(shares))
    centre = np.asarray(modes, dtype=np.float64)[mode]
    lengths = np.rint(centre * (1 + jitter * rng.uniform(-1, 1, n))).astype(np.int64)
    np.clip(lengths, 1, n_cols, out=lengths)
    return gen._local_graph(lengths, n_cols, seed, dtype)


def _bimodal(nnz, seed, dtype):
    return _modes(nnz, seed, dtype, (4, 128), (0.9, 0.1), 0.0)


def _multimodal(nnz, seed, dtype):
    return _modes(nnz, seed, dtype, (2, 12, 96, 768), (0.5, 0.3, 0.15, 0.05), 0.25)


# ---------------------------------------------------------------------- bands
def _banded_fixed(nnz, seed, dtype):
    return gen.banded(max(64, int(round(nnz / 33))), 16, seed=seed, dtype=dtype)


def _banded_random(nnz, seed, dtype):
    n = max(128, int(round(nnz / 32.5)))
    rng = np.random.default_rng(np.random.SeedSequence([seed, 23]))
    lengths = rng.integers(1, 65, size=n).astype(np.int64)
    first = np.clip(np.arange(n, dtype=np.int64) - lengths // 2, 0, n - lengths)

    def fill(r0, r1, rng):
        row_of, within = gen._row_layout(lengths[r0:r1])
        cols = first[r0:r1][row_of] + within
        return cols, gen._random_values(rng, cols.shape[0])

    return gen._assemble(lengths, n, fill, seed, dtype, stream=23)


# --------------------------------------------------------------------- blocks
def _block_dense(nnz, seed, dtype):
    n = max(256, nnz // 16)  # short rows: mean 8, half the nonzeros
    rows = max(n // 500, math.ceil(nnz / n))  # dense rows half-full over `cols` columns: the other half
    cols = int(min(n, max(16, nnz // rows)))
    return gen.blockdense(n, rows, cols, 0.5, seed=seed, dtype=dtype)


BLOCK = 8
BLOCKS_PER_ROW = 5


def _block_sparse(nnz, seed, dtype):
    """Dense BLOCK x BLOCK blocks, BLOCKS_PER_ROW a block row, block columns near the diagonal."""
    n_blocks = max(2 * BLOCKS_PER_ROW, int(round(nnz / (BLOCK * BLOCK * BLOCKS_PER_ROW))))
    n = n_blocks * BLOCK
    rng = np.random.default_rng(np.random.SeedSequence([seed, 24]))
    per = np.full(n_blocks, BLOCKS_PER_ROW, dtype=np.int64)
    block_cols, _, _ = gen._sorted_columns(per, n_blocks, rng, np.arange(n_blocks, dtype=np.float64),
                                           ((0.8, 16),))
    block_cols = block_cols.reshape(n_blocks, BLOCKS_PER_ROW)
    lengths = np.full(n, BLOCK * BLOCKS_PER_ROW, dtype=np.int64)
    inner = np.arange(BLOCK, dtype=np.int64)

    def fill(r0, r1, rng):
        pattern = block_cols[np.arange(r0, r1) // BLOCK]  # (rows, blocks), sorted
        cols = (pattern[:, :, None] * BLOCK + inner).reshape(r1 - r0, -1).ravel()
        return cols, gen._random_values(rng, cols.shape[0])

    return gen._assemble(lengths, n, fill, seed, dtype, stream=24)


# -------------------------------------------------------------- mixed lengths
def _hub_rows(nnz, seed, dtype, hubs, hub_share):
    """Short local rows (1..15, mean 8) plus ``hubs`` rows of uniform columns holding about
    ``hub_share`` of the nonzeros (hugerows: a hub's length is uniform in [0.45 L, L], mean 0.725 L)."""
    n = max(64, int(nnz * (1 - hub_share) / 8))
    hubs = min(hubs, n)
    length = int(min(n, max(2, nnz * hub_share / hubs / 0.725)))
    return gen.hugerows(n, hubs, length, seed=seed, dtype=dtype)


def _mixed_lengths(nnz, seed, dtype):
    return _hub_rows(nnz, seed, dtype, 16, 0.5)


def _hub_rows_fit(nnz, seed, dtype):
    # mixed-lengths' sibling in the fit half (added in session 15: the fit half had no large
    # matrix whose longest rows hold a large share of the nonzeros)
    return _hub_rows(nnz, seed, dtype, 24, 0.3)


# ----------------------------------------------------------------- rectangles
def _uniform_rows(n_rows, n_cols, lengths, seed, dtype):
    return gen._local_graph(np.asarray(lengths, dtype=np.int64), n_cols, seed, dtype, windows=())


def _tall_skinny(nnz, seed, dtype):
    n_rows = max(64, nnz // 8)
    return _uniform_rows(n_rows, 512, np.full(n_rows, 8), seed, dtype)


def _short_wide(nnz, seed, dtype):
    length = int(min(8192, max(8, nnz // 8)))
    n_rows = max(1, nnz // length)
    n_cols = int(min(1 << 24, max(16 * length, nnz // 6)))
    return _uniform_rows(n_rows, n_cols, np.full(n_rows, length), seed, dtype)


# ------------------------------------------------------------- random columns
def _random_uniform(nnz, seed, dtype):
    return gen.random(max(32, nnz // 16), 16, seed=seed, dtype=dtype)


def _short_random(nnz, seed, dtype):
    return gen.random(max(32, nnz // 3), 3, seed=seed, dtype=dtype)


ZIPF_POWER = 4.0  # column = span * u**ZIPF_POWER: a quarter of the draws fall in the first 0.4% of columns


def _zipf_columns(nnz, seed, dtype):
    n = max(64, nnz // 8)
    lengths = np.full(n, 8, dtype=np.int64)

    def fill(r0, r1, rng):
        k = lengths[r0:r1]
        row_of, within = gen._row_layout(k)
        u = gen._sorted_uniforms(k, row_of, within, rng)
        draw = np.floor((n - 8 + 1) * u ** ZIPF_POWER).astype(np.int64)  # monotone: order survives
        return draw + within, gen._random_values(rng, draw.shape[0])

    return gen._assemble(lengths, n, fill, seed, dtype, stream=25)


# ------------------------------------------------------------- unaligned rows
KNN_K, KNN_HALF_WIDTH = 10, 5000


def _unaligned_rows(lengths_of, n_cols_of, windows=()):
    """A family of rows whose lengths ``lengths_of(nnz, rng)`` draws (about nnz of them in all),
    over ``n_cols_of(n_rows)`` columns, uniform or within ``windows`` of the diagonal
    (spla.io.generators' column mixture)."""
    def build(nnz, seed, dtype):
        rng = np.random.default_rng(np.random.SeedSequence([seed, 26]))
        lengths = lengths_of(nnz, rng)
        n_cols = n_cols_of(lengths.shape[0])
        return gen._local_graph(np.minimum(lengths, n_cols), n_cols, seed, dtype, windows=windows)
    return build


_knn_window = _unaligned_rows(lambda nnz, rng: np.full(max(64, nnz // KNN_K), KNN_K, dtype=np.int64),
                              lambda n: n, windows=((1.0, KNN_HALF_WIDTH),))
_tiny_narrow = _unaligned_rows(lambda nnz, rng: rng.integers(1, 5, max(64, int(nnz / 2.5))), lambda n: 2000)


def _five_to_fifteen(nnz, rng):
    return rng.integers(5, 16, max(64, nnz // 10))


_random_width = _unaligned_rows(_five_to_fifteen, lambda n: n)
_random_width_60k = _unaligned_rows(_five_to_fifteen, lambda n: 60_000)


# -------------------------------------------------------------------- registry
_FAMILIES = [
    Family("stencil5", "fit", "stencil", "2-D 5-point Laplacian", _stencil5),
    Family("stencil7", "report", "stencil", "3-D 7-point Laplacian", _stencil7),
    Family("stencil9", "report", "stencil", "2-D 9-point box stencil", _stencil9),
    Family("stencil27", "fit", "stencil", "3-D 27-point box stencil", _stencil27),
    Family("stencil25", "report", "stencil", "3-D star of radius 4 (higher order)", _stencil25),
    Family("powerlaw-steep", "fit", "power law", "power-law rows, mean 4, longest 256", _powerlaw_steep),
    Family("powerlaw-mid", "report", "power law", "power-law rows, mean 8, longest 8 sqrt(n)", _powerlaw_mid),
    Family("powerlaw-heavy", "fit", "power law", "power-law rows, mean 24, longest n/16", _powerlaw_heavy),
    Family("rmat-graph500", "fit", "rmat", "R-MAT (0.57, 0.19, 0.19, 0.05)",
           _rmat((0.57, 0.19, 0.19, 0.05), 0.2)),
    Family("rmat-skewed", "report", "rmat", "R-MAT (0.70, 0.12, 0.12, 0.06)", _rmat((0.70, 0.12, 0.12, 0.06), 0.4)),
    Family("rmat-mild", "report", "rmat", "R-MAT (0.45, 0.22, 0.22, 0.11)", _rmat((0.45, 0.22, 0.22, 0.11), 0.05)),
    Family("bimodal", "fit", "modes", "rows of 4 or 128 (10% long)", _bimodal),
    Family("multimodal", "report", "modes", "rows around 2, 12, 96, 768", _multimodal),
    Family("banded-fixed", "fit", "band", "full band, half-width 16", _banded_fixed),
    Family("banded-random", "report", "band", "contiguous rows of random width 1..64", _banded_random),
    Family("block-dense", "fit", "block", "short rows + 0.2% half-dense rows over one block", _block_dense),
    Family("block-sparse", "report", "block", "dense 8x8 blocks, 5 a block row", _block_sparse),
    Family("empty-rows", "fit", "irregular", "90% empty rows, power law on the rest", _empty_rows),
    Family("mixed-lengths", "report", "irregular", "short rows + 16 rows with half the nnz", _mixed_lengths),
    Family("hub-rows", "fit", "irregular", "short rows + 24 rows with 30% of the nnz", _hub_rows_fit),
    Family("tall-skinny", "fit", "rectangle", "rows of 8 over 512 columns", _tall_skinny),
    Family("short-wide", "report", "rectangle", "rows of up to 8192 over up to 16M columns", _short_wide),
    Family("random-uniform", "fit", "random", "16 uniform random columns a row", _random_uniform),
    Family("short-random", "report", "random", "3 uniform random columns a row", _short_random),
    Family("zipf-columns", "fit", "random", "8 Zipf-skewed columns a row", _zipf_columns),
    Family("knn-window", "fit", "unaligned", "10 columns a row within +-5,000 of the diagonal", _knn_window),
    Family("tiny-narrow", "fit", "unaligned", "rows of 1-4 over 2,000 columns", _tiny_narrow),
    Family("random-width", "report", "unaligned", "rows of 5-15 uniform columns", _random_width),
    Family("random-width-60k", "report", "unaligned", "rows of 5-15 over 60,000 columns", _random_width_60k),
]
FAMILIES: dict[str, Family] = {f.name: f for f in _FAMILIES}


def family_seed(name: str, seed: int) -> int:
    """The seed a family is built with: independent streams for every (family, seed)."""
    return zlib.crc32(f"{name}:{int(seed)}".encode())


def families(half: str | None = None) -> list[str]:
    """Family names in table order, all or one half (``"fit"`` or ``"report"``)."""
    if half is not None and half not in HALVES:
        raise InputError(f"half must be one of {HALVES}, got {half!r}")
    return [f.name for f in _FAMILIES if half is None or f.half == half]


def build(name: str, nnz: int, *, seed: int = 0, dtype=np.float64) -> CSRMatrix:
    """Family ``name`` at about ``nnz`` nonzeros (within a factor of 2 from 10k nnz up).

    Parameters
    ----------
    name : str
        A name from :data:`FAMILIES`.
    nnz : int
        The target number of nonzeros (at least MIN_NNZ); each family rounds
        it to its own grid (a cube side, a power of two, a block row).
    seed : int
        Same (name, nnz, seed), same arrays on every machine.
    dtype : float32 or float64
    """
    if name not in FAMILIES:
        raise InputError(f"unknown corpus family {name!r}; expected one of {', '.join(FAMILIES)}")
    if int(nnz) < MIN_NNZ:
        raise InputError(f"corpus matrices need nnz >= {MIN_NNZ}, got {nnz}")
    return FAMILIES[name].build(int(nnz), family_seed(name, seed), np.dtype(dtype))


def corpus(nnz: int, *, half: str | None = None, seed: int = 0, dtype=np.float64) -> Iterator[tuple[str, CSRMatrix]]:
    """``(name, matrix)`` for every family (or one half), built one at a time."""
    for name in families(half):
        yield name, build(name, nnz, seed=seed, dtype=dtype)


def load(source: str, *, dtype=np.float64) -> CSRMatrix:
    """``corpus:FAMILY:NNZ`` (``corpus:banded-random:4e7``) built by :func:`build`, or any source
    :func:`spla.io.load` reads (a file, a ``gen:`` spec): the matrix sources of the A/B scripts."""
    if not source.startswith("corpus:"):
        from ..io import load as io_load

        return io_load(source, dtype=dtype, cache=False)
    _, name, nnz = (source.split(":") + ["", ""])[:3]
    try:
        target = int(float(nnz))
    except ValueError:
        raise InputError(f"a corpus source is corpus:FAMILY:NNZ (corpus:banded-random:4e7), got {source!r}") from None
    return build(name, target, dtype=dtype)
