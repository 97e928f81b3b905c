"""PNG pictures of matrices and results: sparsity pattern, row lengths, throughput, roofline.

matplotlib is optional (``pip install 'spla[plot]'``); every function raises
:class:`spla.InputError` with that hint when it is missing. Figures are drawn
with matplotlib's object API on the Agg canvas (no pyplot state, no display
needed) and written atomically: a temporary file in the target folder,
renamed when complete.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np

from .errors import InputError

SPY_PIXELS = 800


def _figure(width=6.4, height=4.8, layout=None):
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise InputError("plots need matplotlib: pip install 'spla[plot]' (or pip install matplotlib)") from None
    # the default layout is much cheaper to draw than "constrained"; only plots
    # with rotated tick labels ask for the latter
    return Figure(figsize=(width, height), layout=layout)


def _save(fig, path) -> Path:
    path = Path(path)
    if not path.parent.is_dir():
        raise InputError(f"{path}: the folder {path.parent} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".png", dir=path.parent)
    os.close(fd)
    try:
        fig.savefig(tmp, format="png", dpi=120)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; a plot is for sharing
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def _host_csr(A):
    from .csr import as_csr

    return as_csr(A).to_host()


def spy(A, path, *, pixels: int = SPY_PIXELS, title: str | None = None) -> Path:
    """Write the sparsity pattern of ``A`` as a PNG: nnz per pixel, log colour scale.

    Large matrices are binned onto at most ``pixels`` x ``pixels`` cells
    (a plain marker plot of millions of points is slow and saturates), so
    every pixel shows how many entries it covers.

    See Also
    --------
    matplotlib.pyplot.spy
    """
    fig = _figure(6.4, 6.0, layout="constrained")  # room for six-digit row ticks beside the label
    from matplotlib.colors import LogNorm

    A = _host_csr(A)
    n_rows, n_cols = A.shape
    bins_r, bins_c = max(1, min(pixels, n_rows)), max(1, min(pixels, n_cols))
    rows = np.repeat(np.arange(n_rows, dtype=np.int64), np.diff(A.indptr))
    cells = (rows * bins_r // max(n_rows, 1)) * bins_c + A.indices.astype(np.int64) * bins_c // max(n_cols, 1)
    counts = np.bincount(cells, minlength=bins_r * bins_c).reshape(bins_r, bins_c).astype(float)
    ax = fig.subplots()
    masked = np.ma.masked_equal(counts, 0)
    image = ax.imshow(masked, cmap="viridis", interpolation="nearest", aspect="auto",
                      extent=(0, n_cols, n_rows, 0),
                      norm=LogNorm(vmin=1, vmax=max(1.0, counts.max())) if A.nnz else None)
    fig.colorbar(image, ax=ax, label="nnz per pixel", shrink=0.8)
    from matplotlib.ticker import MaxNLocator, StrMethodFormatter

    for axis in (ax.xaxis, ax.yaxis):  # few, comma-grouped ticks: six-digit sizes stay legible
        axis.set_major_locator(MaxNLocator(5, integer=True))
        axis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
    ax.set_xlabel("column")
    ax.set_ylabel("row")
    ax.set_title(title or f"{n_rows:,} x {n_cols:,}, nnz {A.nnz:,}")
    return _save(fig, path)


def row_length_histogram(A_or_lengths, path, *, title: str | None = None) -> Path:
    """Log-log histogram of row lengths (logarithmic bins); empty rows are counted in the legend."""
    if hasattr(A_or_lengths, "indptr") or hasattr(A_or_lengths, "tocsr"):
        lengths = np.diff(_host_csr(A_or_lengths).indptr)
    else:
        lengths = np.asarray(A_or_lengths)
    lengths = lengths.astype(np.int64)
    fig = _figure()
    ax = fig.subplots()
    busy = lengths[lengths > 0]
    empty = int((lengths == 0).sum())
    if busy.size:
        top = int(busy.max())
        edges = np.unique(np.round(np.logspace(0, np.log10(top + 1), 40)).astype(np.int64))
        if edges[-1] <= top:
            edges = np.append(edges, top + 1)
        counts, _ = np.histogram(busy, bins=edges)
        # rows per unit length, so wide log bins do not look heavier than narrow ones
        density = counts / np.diff(edges)
        keep = counts > 0
        ax.loglog(edges[:-1][keep], density[keep], "o-", markersize=3,
                  label=f"{busy.size:,} rows, mean {lengths.mean():.1f}, max {top:,}")
    ax.plot([], [], " ", label=f"{empty:,} empty rows")
    ax.set_xlabel("row length (nnz)")
    ax.set_ylabel("rows per unit length")
    ax.set_title(title or "row-length distribution")
    ax.legend(loc="best", fontsize="small")
    return _save(fig, path)


def throughput_bars(results, path, *, metric: str = "gbps", title: str | None = None,
                    ceiling: float | None = None) -> Path:
    """Grouped bars of ``metric`` per matrix and kernel.

    ``results`` is an iterable of dicts with keys ``matrix``, ``kernel`` and
    ``metric`` (e.g. ``gbps``, ``gflops``, ``speedup``); ``ceiling`` draws a
    horizontal line (for example the measured copy bandwidth).
    """
    results = [r for r in results if r.get(metric) is not None]
    if not results:
        raise InputError(f"no results with a {metric!r} value to plot")
    matrices = list(dict.fromkeys(r["matrix"] for r in results))
    kernels = list(dict.fromkeys(r["kernel"] for r in results))
    values = {(r["matrix"], r["kernel"]): float(r[metric]) for r in results}
    fig = _figure(max(6.4, 0.9 * len(matrices) * max(1, len(kernels)) ** 0.5 + 2), 4.8, layout="constrained")
    ax = fig.subplots()
    width = 0.8 / len(kernels)
    positions = np.arange(len(matrices))
    for k, kernel in enumerate(kernels):
        heights = [values.get((m, kernel), np.nan) for m in matrices]
        ax.bar(positions + (k - (len(kernels) - 1) / 2) * width, heights, width, label=kernel)
    if ceiling:
        ax.axhline(ceiling, color="black", linestyle="--", linewidth=1, label=f"ceiling {ceiling:,.0f}")
    ax.set_xticks(positions, matrices, rotation=30, ha="right", fontsize="small")
    ax.set_ylabel({"gbps": "effective GB/s", "gflops": "GFLOP/s", "speedup": "speed-up vs anchor",
                   "ms": "ms per call"}.get(metric, metric))
    ax.set_title(title or f"{metric} per matrix")
    ax.legend(fontsize="small", ncol=min(4, len(kernels) + bool(ceiling)))
    return _save(fig, path)


def roofline(points, path, *, bandwidth_gbps: float, peak_gflops: float | None = None,
             title: str | None = None) -> Path:
    """A roofline plot: GFLOP/s against arithmetic intensity (FLOP/byte), log-log.

    ``points`` are dicts with ``label``, ``intensity`` (FLOP per byte moved)
    and ``gflops``; ``bandwidth_gbps`` draws the memory roof
    ``GFLOP/s = intensity * GB/s`` and ``peak_gflops`` the compute roof.
    CSR SpMV sits near 2 FLOP per 12 bytes, deep under the memory roof.
    """
    points = [p for p in points if p.get("intensity") and p.get("gflops")]
    if not points:
        raise InputError("no points with intensity and gflops to plot")
    fig = _figure()
    ax = fig.subplots()
    intensities = np.array([p["intensity"] for p in points], dtype=float)
    lo = min(intensities.min() / 4, 0.01)
    hi = max(intensities.max() * 4, 10 if peak_gflops is None else 4 * peak_gflops / bandwidth_gbps)
    x = np.logspace(np.log10(lo), np.log10(hi), 200)
    roof = x * bandwidth_gbps
    if peak_gflops:
        roof = np.minimum(roof, peak_gflops)
    ax.loglog(x, roof, color="black", linewidth=1.5, label=f"roof: {bandwidth_gbps:,.0f} GB/s"
              + (f", {peak_gflops:,.0f} GFLOP/s" if peak_gflops else ""))
    for label in dict.fromkeys(p.get("kernel", p["label"]) for p in points):
        group = [p for p in points if p.get("kernel", p["label"]) == label]
        ax.loglog([p["intensity"] for p in group], [p["gflops"] for p in group], "o", label=label)
    for p in points:  # which matrix each point is (the legend names the kernel)
        if "kernel" in p:
            ax.annotate(p["label"], (p["intensity"], p["gflops"]), textcoords="offset points", xytext=(4, 2),
                        fontsize=6)
    ax.set_xlabel("arithmetic intensity (FLOP / byte)")
    ax.set_ylabel("GFLOP/s")
    ax.set_title(title or "roofline")
    ax.legend(fontsize="small")
    return _save(fig, path)
