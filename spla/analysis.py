"""``spla.analyze``: row-length statistics and load imbalance under each work mapping.

Everything is computed from the row lengths (``diff(indptr)``, copied to the
host if the matrix is on the GPU) with whole-array NumPy operations: a
histogram of lengths (``bincount``) gives the median, Gini coefficient and top
1% share in O(rows + longest row), so a 100M-nnz matrix takes well under a
second.

Work mappings (how a CSR SpMV kernel hands rows to hardware), with the
figures each one gets:

thread-per-row (``spmv_scalar``)
    Lane *i* of a warp takes row ``32*w + i``; the warp finishes when its
    longest row does, so the **work of a warp** is the longest row length among
    its 32 rows (the last warp may have fewer rows). ``imbalance`` is the
    largest warp's work over the mean warp's work; ``simd_efficiency`` is
    ``nnz / (32 * sum of warp work)``: the share of lane-steps that do useful
    multiply-adds.
warp-per-row (``spmv_warp``)
    Each row gets a warp, which walks it 32 entries at a time, so a row costs
    ``ceil(len / 32)`` warp-steps (an empty row costs none). Rows are grouped
    into thread blocks of :data:`WARPS_PER_BLOCK` consecutive rows; the
    **work of a block** is the sum of its rows' warp-steps (what its SM has to
    issue). ``imbalance`` is max over mean block work; ``lane_efficiency``
    is ``nnz / (32 * total warp-steps)``, the share of lanes busy in a step.

When a matrix has no work at all (every row empty) imbalance and efficiency
are reported as 1.0: nothing is waiting on anything.

A third mapping, ``auto``, shows the plan ``auto`` runs on the GPU
(segmented's tiles or the adaptive plan), computed on the host from
:mod:`spla.planning`.
"""

from __future__ import annotations

import math

import numpy as np

from .csr import as_csr
from .planning import adaptive, ceil_div, segmented
from .planning.spmv import bound_param, choose_kernel, parse_kernel

WARP_SIZE = 32
WARPS_PER_BLOCK = 8
TOP_SHARE_FRACTION = 0.01
# bincount is used while the longest row is at most this many times the row count
# (its counts then take at most 8 bytes a row); beyond, np.unique sorts a copy
HISTOGRAM_MAX_RATIO = 1
# Per-group work and the histogram are computed over this many rows at a time, so
# the temporaries stay a few MB whatever the row count (a multiple of every group size).
CHUNK_ROWS = 1 << 20


def _ratio(numerator: float, denominator: float) -> float:
    return float(numerator / denominator) if denominator else 1.0


def row_length_histogram(lengths: np.ndarray):
    """Distinct row lengths (ascending) and how many rows have each."""
    if lengths.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    longest = int(lengths.max())
    if longest <= HISTOGRAM_MAX_RATIO * lengths.size + 1024:
        # chunk by chunk: bincount casts its input to intp, a copy of 8 bytes a row
        counts = np.zeros(longest + 1, dtype=np.int64)
        for start in range(0, lengths.size, CHUNK_ROWS):
            counts += np.bincount(lengths[start:start + CHUNK_ROWS], minlength=longest + 1)
        values = np.flatnonzero(counts)
        return values.astype(np.int64), counts[values].astype(np.int64)
    values, counts = np.unique(lengths, return_counts=True)  # a few huge rows: sort instead
    return values.astype(np.int64), counts.astype(np.int64)


def _median(values, counts, n) -> float:
    cumulative = np.cumsum(counts)
    lower = values[np.searchsorted(cumulative, (n - 1) // 2, side="right")]
    upper = values[np.searchsorted(cumulative, n // 2, side="right")]
    return (float(lower) + float(upper)) / 2


def _gini(values, counts, n, total) -> float:
    """Gini of the lengths: sum_i (2i - n - 1) x_(i) / (n * sum x), x sorted ascending, i from 1.

    A run of c equal values v at sorted positions a+1..a+c contributes
    v * c * (2a + c - n), so the histogram gives the exact sum.
    """
    if total == 0:
        return 0.0
    starts = (np.cumsum(counts) - counts).astype(np.float64)
    c = counts.astype(np.float64)
    return float(np.sum(values.astype(np.float64) * c * (2 * starts + c - n)) / (n * float(total)))


def _top_share(values, counts, n, total) -> float:
    """Share of all entries held by the longest ceil(1% of rows) rows."""
    if total == 0:
        return 0.0
    k = max(1, math.ceil(TOP_SHARE_FRACTION * n))
    v, c = values[::-1], counts[::-1]
    cumulative = np.cumsum(c)
    whole = int(np.searchsorted(cumulative, k, side="right"))  # runs entirely inside the top k
    taken = int(cumulative[whole - 1]) if whole else 0
    top = float(np.sum(v[:whole].astype(np.float64) * c[:whole]))
    if taken < k:
        top += float(v[whole]) * (k - taken)
    return top / float(total)


def _group_figures(lengths: np.ndarray, size: int, combine, unit: str, transform=None):
    """Work per group of ``size`` consecutive rows (``combine`` of ``transform(lengths)`` over
    each group; the last group may be short): the shared figures, and the total work.

    Lengths are non-negative, so a short last group gives what zero padding would.
    """
    n = lengths.size
    n_groups = ceil_div(n, size)
    total, longest = 0, 0
    for start in range(0, n, CHUNK_ROWS):
        part = lengths[start:start + CHUNK_ROWS]
        if transform is not None:
            part = transform(part)
        full = part.size // size * size
        if full:
            groups = combine(part[:full].reshape(-1, size), axis=1)
            total += int(groups.sum(dtype=np.int64))
            longest = max(longest, int(groups.max()))
        if full < part.size:
            last = int(combine(part[full:].astype(np.int64)))
            total += last
            longest = max(longest, last)
    mean = float(total) / n_groups if n_groups else 0.0
    return {"unit": unit, "groups": int(n_groups), "max_work": longest, "mean_work": mean,
            "imbalance": _ratio(float(longest), mean)}, float(total)


def thread_per_row(lengths: np.ndarray, nnz: int) -> dict:
    """Figures for one thread per row, 32 consecutive rows per warp (see module docstring)."""
    figures, total = _group_figures(lengths, WARP_SIZE, np.max,
                                    f"warp of {WARP_SIZE} consecutive rows; work = its longest row")
    figures["simd_efficiency"] = _ratio(nnz, WARP_SIZE * total)
    return figures


def warp_per_row(lengths: np.ndarray, nnz: int) -> dict:
    """Figures for one warp per row, WARPS_PER_BLOCK rows per block (see module docstring)."""
    figures, total = _group_figures(lengths, WARPS_PER_BLOCK, np.sum,
                                    f"block of {WARPS_PER_BLOCK} warps, one row each; "
                                    f"work = sum of ceil(row length / {WARP_SIZE})",
                                    transform=lambda part: ceil_div(part, WARP_SIZE))
    figures["lane_efficiency"] = _ratio(nnz, WARP_SIZE * total)
    return figures


def _count(n: int) -> str:
    for size, suffix in ((10**9, "G"), (10**6, "M"), (10**3, "k")):
        if n >= size:
            return f"{n / size:.3g}{suffix}"
    return str(n)


def auto_plan(lengths, nnz, A) -> dict:
    """The plan as one of spla.analysis's work mappings (shown by ``spla info``).

    The plan shown is the one ``auto`` runs: segmented's or staged's tiles,
    adaptive2's plan, or else adaptive's.
    """
    kernel = choose_kernel(A)
    family, param = parse_kernel(kernel)
    if family in ("segmented", "staged"):
        param = bound_param(A, family, param)
        assert param is not None
        if family == "segmented":
            summary = segmented.segmented_summary(A, 32 * param)
            who = f"one warp each ({segmented.SEGMENTED_WARPS} a block)"
            finish = ""
        else:
            summary = segmented.segmented_summary(A, segmented.STAGED_THREADS * param, "staged")
            who = f"one block of {segmented.STAGED_THREADS} threads each"
            finish = (", added in the kernel (one launch)" if segmented.staged_in_one_launch(summary["cut_rows"])
                      else ", added by a second launch")
            if segmented.staged_narrow_columns(A, param) is not None:
                finish += "; columns read as 2-byte offsets (every tile spans < 65,536 columns)"
            coded = segmented.staged_palette(A) if A.on_gpu else None  # (the launcher's choice: a GPU matrix's)
            if segmented.staged_uniform(A):
                finish += f"; values not read (every value is {float(A.data[0]):g})"
            elif coded is not None:
                finish += f"; values read as a byte each, codes for their {coded.n_values} distinct values"
        return {
            "unit": (f"{family} tiles of {summary['tile']} nnz, {who}; work = its nnz + the rows it owns; "
                     f"{_count(summary['cut_rows'])} rows cross a tile edge{finish}, "
                     f"{_count(summary['counted_rows'])} of them touch 3+ tiles; auto runs {kernel}"),
            "groups": summary["tiles"],
            "max_work": summary["tile_work_max"],
            "mean_work": summary["tile_work_mean"],
            "imbalance": summary["imbalance"],
            "plan": summary,
        }
    plan = adaptive.plan2_for(A) if kernel == "adaptive2" else adaptive.plan_for(A)
    summary = plan.summary()
    paths = ", ".join(f"{name} {_count(p['rows'])}/{_count(p['nnz'])}" for name, p in summary["paths"].items())
    return {
        "unit": (f"{'adaptive2' if kernel == 'adaptive2' else 'adaptive'} plan, blocks of {adaptive.ADAPTIVE_THREADS} "
                 f"threads, nnz-balanced; work = its nnz; rows/nnz per path: {paths}; auto runs {kernel}"),
        "groups": summary["blocks"],
        "max_work": summary["block_nnz_max"],
        "mean_work": summary["block_nnz_mean"],
        "imbalance": summary["imbalance"],
        "plan": summary,
    }


# name -> function(row_lengths, nnz, A) -> dict
MAPPINGS = {
    "thread_per_row": lambda lengths, nnz, A: thread_per_row(lengths, nnz),
    "warp_per_row": lambda lengths, nnz, A: warp_per_row(lengths, nnz),
    "auto": auto_plan,
}


def compact_row_lengths(A) -> np.ndarray:
    """Row lengths in the narrowest safe type: int32 when nnz fits (4 bytes a row), else int64.

    Written straight into the result (the subtraction is buffered), so no
    int64 temporary of the row count is made; on the GPU only the lengths
    cross to the host.
    """
    dtype = np.int32 if A.nnz <= np.iinfo(np.int32).max else np.int64
    indptr = A.indptr
    if A.on_gpu:
        return (indptr[1:] - indptr[:-1]).astype(dtype).get()
    indptr = np.asarray(indptr)
    lengths = np.empty(indptr.size - 1, dtype=dtype)
    np.subtract(indptr[1:], indptr[:-1], out=lengths, casting="unsafe")
    return lengths


def _std(values, counts, n, mean) -> float:
    """Population standard deviation of the lengths, from their histogram."""
    deviation = values.astype(np.float64) - mean
    return float(np.sqrt(np.sum(counts * deviation * deviation) / n))


# Peak host bytes per row of analyze() with every registered mapping: the row
# statistics here take about 5, the adaptive plan behind the "auto" mapping the rest.
ANALYSIS_BYTES_PER_ROW = 72


def _check_memory(A) -> None:
    """One clear error before a tall matrix's analysis would exhaust host memory."""
    from .io.memory import check_host_memory

    check_host_memory(ANALYSIS_BYTES_PER_ROW * (A.n_rows + 1) + 2 * A.nnz,
                      f"analysis of the {A.n_rows:,}-row matrix (row statistics and the adaptive plan, "
                      f"about {ANALYSIS_BYTES_PER_ROW} bytes a row)")


def analyze(A) -> dict:
    """Row-length statistics and load-imbalance figures of a sparse matrix.

    Parameters
    ----------
    A : CSRMatrix, scipy.sparse or cupyx.scipy.sparse matrix, dense array

    Returns
    -------
    dict
        ``rows``, ``cols``, ``nnz``, ``density``;
        ``row_length``: ``min``, ``mean``, ``median``, ``max``, ``std``
        (population), ``cv`` (std / mean), ``gini``, ``top1pct_share``
        (share of nnz in the longest ceil(1%) rows), ``empty_rows``;
        ``values``: ``nan``, ``inf``, ``explicit_zeros``;
        ``mappings``: one dict per work mapping (see the module docstring).

    See Also
    --------
    scipy.sparse.csr_matrix.getnnz, numpy.diff
    """
    A = as_csr(A)
    _check_memory(A)
    lengths = compact_row_lengths(A)
    n_rows, n_cols, nnz = A.n_rows, A.n_cols, A.nnz
    values, counts = row_length_histogram(lengths)
    stats = {
        "min": int(values[0]) if n_rows else 0,
        "mean": float(nnz / n_rows) if n_rows else 0.0,
        "median": _median(values, counts, n_rows) if n_rows else 0.0,
        "max": int(values[-1]) if n_rows else 0,
        "std": _std(values, counts, n_rows, nnz / n_rows) if n_rows else 0.0,
        "empty_rows": int(counts[0]) if n_rows and values[0] == 0 else 0,
    }
    stats["cv"] = stats["std"] / stats["mean"] if stats["mean"] else 0.0
    stats["gini"] = _gini(values, counts, n_rows, nnz) if n_rows else 0.0
    stats["top1pct_share"] = _top_share(values, counts, n_rows, nnz) if n_rows else 0.0

    xp = A.xp
    data = A.data
    value_stats = {
        "nan": int(xp.count_nonzero(xp.isnan(data))),
        "inf": int(xp.count_nonzero(xp.isinf(data))),
        "explicit_zeros": int(xp.count_nonzero(data == 0)),
    }
    mappings = {name: figure(lengths, nnz, A) for name, figure in MAPPINGS.items()}
    return {
        "rows": n_rows,
        "cols": n_cols,
        "nnz": nnz,
        "density": nnz / (n_rows * n_cols) if n_rows and n_cols else 0.0,
        "row_length": stats,
        "values": value_stats,
        "mappings": mappings,
    }


def format_analysis(result: dict) -> str:
    """The analysis as readable text (what ``spla info`` prints)."""
    r, s = result, result["row_length"]
    lines = [
        f"matrix      {r['rows']:,} x {r['cols']:,}, nnz {r['nnz']:,}, density {r['density']:.3g}",
        f"row length  min {s['min']:,}  mean {s['mean']:.2f}  median {s['median']:g}  max {s['max']:,}  "
        f"std {s['std']:.2f}",
        f"spread      cv {s['cv']:.2f}  gini {s['gini']:.3f}  top 1% rows hold {100 * s['top1pct_share']:.1f}% "
        f"of nnz  empty rows {s['empty_rows']:,}",
    ]
    v = r["values"]
    if v["nan"] or v["inf"] or v["explicit_zeros"]:
        lines.append(f"values      NaN {v['nan']:,}  Inf {v['inf']:,}  explicit zeros {v['explicit_zeros']:,}")
    lines.append("load imbalance under each GPU work mapping (max / mean work per group; 1.0 is perfect):")
    for name, m in r["mappings"].items():
        efficiency = ", ".join(f"{key.replace('_', ' ')} {100 * m[key]:.1f}%"
                               for key in m if key.endswith("efficiency"))
        lines.append(f"  {name.replace('_', '-'):<15} {m['imbalance']:9.2f}   {efficiency}   ({m['unit']})")
    return "\n".join(lines)
