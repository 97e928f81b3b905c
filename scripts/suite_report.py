#!/usr/bin/env python3
"""Analyse and benchmark SpMV over a whole suite of matrices; write CSV, JSON and PNG plots.

Usage::

    python scripts/suite_report.py SOURCE... [--device auto|cpu|gpu] [--kernels all|K1,K2]
                                   [--dtype float32|float64] [--repeat N] [--out report/]

A SOURCE is a folder (every .mtx, .mtx.gz, .txt, .txt.gz in it), a catalogue
name (``web-Google``, once fetched), a file, a ``gen:`` spec, or a named
suite: ``suite:generated`` (the SpMV benchmark's synthetic suite at full
size: 16M-row power law, 2D Poisson 4096^2, ...), ``suite:ci`` (the same
kinds, CI-sized: seconds on a laptop CPU) or ``suite:williams`` /
``suite:snap`` (catalogue suites, the ones present in ``matrices/``).

For each matrix: load (through the binary cache), the load-imbalance
analysis of :func:`spla.analyze`, then :func:`spla.bench.spmv.spmv_report` per
kernel (ms, GFLOP/s, effective GB/s, speed-up vs cuSPARSE on the GPU or SciPy
on the CPU, relative error vs float64 SciPy). A matrix that fails is
reported and skipped. Writes to ``--out``:

- ``suite.json``: everything, with the device, library versions, date and command;
- ``analysis.csv``: one row per matrix (shape, row-length statistics, imbalance);
- ``kernels.csv``: one row per matrix and kernel;
- PNGs when matplotlib is installed: ``rows_<matrix>.png`` (log-log
  row-length histogram), ``spy_<matrix>.png``, ``throughput.png``,
  ``speedup.png`` and ``roofline.png``;

and prints a markdown table.
"""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import json
import math
import os
import platform
import re
import sys
import time
import traceback
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import spla  # noqa: E402
from spla.bench import report as spla_report  # noqa: E402
from spla.bench import spmv as spla_spmv_report  # noqa: E402
from spla.errors import SplaError  # noqa: E402
from spla.io import catalog  # noqa: E402

# The SpMV benchmark's matrix classes (issue 3): regular short rows, x-gather
# bound, power laws at 916k and 16M rows, a few huge rows, FEM band, dense rows.
SUITES = {
    "generated": [
        "gen:poisson2d:4096", "gen:poisson3d:160", "gen:random:4000000:16", "gen:weblike",
        "gen:powerlaw:16000000:8:34000", "gen:hugerows:2000000:64:1000000", "gen:banded:1000000:20",
        "gen:blockdense:1000000:256:20000:0.8", "gen:rmat:21:16",
    ],
    "ci": [
        "gen:poisson2d:256", "gen:random:50000:16", "gen:powerlaw:100000:8:2000", "gen:hugerows:50000:4:20000",
        "gen:banded:50000:8", "gen:blockdense:20000:32:4000:0.5", "gen:rmat:14:8",
    ],
}
MATRIX_SUFFIXES = (".mtx", ".mtx.gz", ".txt", ".txt.gz")

ANALYSIS_COLUMNS = ["matrix", "source", "rows", "cols", "nnz", "density", "row_min", "row_mean", "row_median",
                    "row_max", "row_std", "row_cv", "gini", "top1pct_share", "empty_rows",
                    "thread_per_row_imbalance", "thread_per_row_simd_efficiency", "warp_per_row_imbalance",
                    "warp_per_row_lane_efficiency", "load_seconds"]
KERNEL_COLUMNS = ["matrix", "rows", "nnz", "row_max", "row_cv", "device", "dtype", "kernel", "ms", "gflops", "gbps",
                  "speedup_vs_anchor", "anchor", "fraction_of_copy", "scaled_error", "ok", "failed"]


def expand_sources(sources) -> list:
    """Folders, suites and catalogue suites become lists of single sources; order kept, duplicates dropped."""
    expanded = []
    for source in sources:
        if source.startswith("suite:"):
            name = source[len("suite:"):]
            if name in SUITES:
                expanded += SUITES[name]
                continue
            present = [e.name for e in catalog.default_catalog().suite(name)
                       if catalog.local_path(e.name) is not None and catalog.local_path(e.name).is_file()]
            if not present:
                print(f"suite_report: no matrix of suite {name!r} is present in {catalog.matrices_dir()}/ "
                      f"(fetch them with `spla fetch --suite {name}`)", file=sys.stderr)
            expanded += present
        elif not source.startswith("gen:") and Path(source).is_dir():
            files = sorted(p for p in Path(source).iterdir()
                           if p.is_file() and p.name.lower().endswith(MATRIX_SUFFIXES))
            if not files:
                print(f"suite_report: {source}: no matrix files in this folder", file=sys.stderr)
            expanded += [str(p) for p in files]
        else:
            expanded.append(source)
    return list(dict.fromkeys(expanded))


def label_for(source: str) -> str:
    """A short, file-name-safe name: web-Google for matrices/web-Google.mtx.gz, poisson2d-256 for a spec."""
    if source.startswith("gen:"):
        text = source[len("gen:"):].replace(":", "-")
    else:
        text = Path(source).name
        for suffix in (".gz", ".mtx", ".txt", ".npz"):
            if text.lower().endswith(suffix):
                text = text[: -len(suffix)]
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", text)


def analysis_row(label: str, source: str, result: dict, load_seconds: float) -> dict:
    lengths = result["row_length"]
    mappings = result.get("mappings", {})
    thread = mappings.get("thread_per_row", {})
    warp = mappings.get("warp_per_row", {})
    return {
        "matrix": label, "source": source, "rows": result["rows"], "cols": result["cols"], "nnz": result["nnz"],
        "density": result["density"], "row_min": lengths["min"], "row_mean": lengths["mean"],
        "row_median": lengths["median"], "row_max": lengths["max"], "row_std": lengths["std"],
        "row_cv": lengths["cv"], "gini": lengths["gini"], "top1pct_share": lengths["top1pct_share"],
        "empty_rows": lengths["empty_rows"], "thread_per_row_imbalance": thread.get("imbalance"),
        "thread_per_row_simd_efficiency": thread.get("simd_efficiency"),
        "warp_per_row_imbalance": warp.get("imbalance"), "warp_per_row_lane_efficiency": warp.get("lane_efficiency"),
        "load_seconds": load_seconds,
    }


def run_kernels(A, source: str, args) -> dict:
    """One report, anchor first; a comma list of kernels runs one report per kernel (anchor kept once)."""
    device = spla_report.resolve_device(args.device)
    wanted = [k.strip() for k in args.kernels.split(",") if k.strip()] or ["all"]
    if device == "cpu":
        wanted = ["auto"]  # the CPU runs spla's SpMV beside SciPy's; GPU names would be refused
    reports = [spla_spmv_report.spmv_report(A, device=device, kernel=kernel, dtype=args.dtype, repeat=args.repeat,
                                       source=source) for kernel in wanted]
    merged = dict(reports[0])
    seen = {row["kernel"] for row in merged["rows"]}
    for extra in reports[1:]:
        for row in extra["rows"]:
            if row["kernel"] not in seen:
                merged["rows"].append(row)
                seen.add(row["kernel"])
    return merged


def kernel_rows(label: str, stats: dict, rep: dict) -> list:
    rows = []
    for row in rep["rows"]:
        rows.append({
            "matrix": label, "rows": stats["rows"], "nnz": stats["nnz"], "row_max": stats["row_max"],
            "row_cv": stats["row_cv"], "device": rep["device"], "dtype": rep["dtype"], "kernel": row["kernel"],
            "ms": row.get("ms"), "gflops": row.get("gflops"), "gbps": row.get("gbps"),
            "speedup_vs_anchor": row.get("speedup_vs_anchor"), "anchor": rep["anchor"],
            "fraction_of_copy": row.get("fraction_of_copy"), "scaled_error": row.get("error"),
            "ok": row.get("ok"), "failed": row.get("failed"),
        })
    return rows


def write_csv(path: Path, columns, rows) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: ("" if row.get(k) is None else row.get(k)) for k in columns})
    os.replace(tmp, path)


def _clean(value):
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def write_json(path: Path, document: dict) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(_clean(document), indent=1) + "\n")
    os.replace(tmp, path)


def host_copy_bandwidth_gbps(nbytes: int = 1 << 26) -> float:
    """NumPy memcpy bandwidth (read + write), the CPU's memory roof for the roofline."""
    src = np.ones(nbytes // 8)
    dst = np.empty_like(src)
    best = math.inf
    for _ in range(3):
        start = time.perf_counter()
        np.copyto(dst, src)
        best = min(best, time.perf_counter() - start)
    return 2 * src.nbytes / best / 1e9


def metadata(args, device: str) -> dict:
    meta = {
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join([Path(sys.argv[0]).name] + sys.argv[1:]),
        "device": device, "device_name": spla_report.device_name(device), "dtype": args.dtype,
        "python": platform.python_version(), "numpy": np.__version__, "spla": spla.__version__,
        "host": platform.node(), "cpu_count": os.cpu_count(),
    }
    import scipy

    meta["scipy"] = scipy.__version__
    if device == "gpu":
        import cupy

        meta["cupy"] = cupy.__version__
    return meta


def plots(out: Path, matrices: list, kernel_table: list, roof_gbps: float | None, device: str) -> list:
    """Every PNG the report draws; [] when matplotlib is missing."""
    try:
        from spla import plots as spla_plots

        spla_plots._figure()
    except (ImportError, SplaError) as exc:
        print(f"suite_report: no plots ({exc})", file=sys.stderr)
        return []
    written = []
    for item in matrices:
        written.append(spla_plots.row_length_histogram(item["lengths"], out / f"rows_{item['label']}.png",
                                                       title=f"{item['label']}: row lengths"))
        if item.get("matrix") is not None:
            written.append(spla_plots.spy(item["matrix"], out / f"spy_{item['label']}.png", title=item["label"]))
    measured = [r for r in kernel_table if r.get("gbps") is not None]
    if measured:
        ceiling = roof_gbps if device == "gpu" else None
        written.append(spla_plots.throughput_bars(measured, out / "throughput.png", metric="gbps",
                                                  title="SpMV effective bandwidth", ceiling=ceiling))
        if len({r["kernel"] for r in measured}) > 1:
            written.append(spla_plots.throughput_bars(measured, out / "speedup.png", metric="speedup_vs_anchor",
                                                      title=f"speed-up vs {measured[0]['anchor']}"))
        if roof_gbps:
            points = [{"label": r["matrix"], "kernel": r["kernel"], "gflops": r["gflops"],
                       "intensity": r["flops"] / r["bytes"]} for r in measured if r.get("bytes")]
            written.append(spla_plots.roofline(points, out / "roofline.png", bandwidth_gbps=roof_gbps,
                                               title=f"SpMV roofline ({device})"))
    return written


def markdown_table(kernel_table: list, failures: list) -> str:
    lines = ["| matrix | rows | nnz | max row | cv | kernel | ms | GFLOP/s | GB/s | speed-up | error/|A||x| |",
             "| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |"]
    for r in kernel_table:
        if r.get("failed"):
            lines.append(f"| {r['matrix']} | {r['rows']:,} | {r['nnz']:,} | {r['row_max']:,} | {r['row_cv']:.2f} "
                         f"| {r['kernel']} | failed: {r['failed']} | | | | |")
            continue
        lines.append(f"| {r['matrix']} | {r['rows']:,} | {r['nnz']:,} | {r['row_max']:,} | {r['row_cv']:.2f} "
                     f"| {r['kernel']} | {r['ms']:.4f} | {r['gflops']:.2f} | {r['gbps']:.1f} "
                     f"| {r['speedup_vs_anchor']:.2f}x | {r['scaled_error']:.1e}{'' if r['ok'] else ' WRONG'} |")
    for f in failures:
        lines.append(f"| {f['matrix']} | | | | | | skipped: {f['error']} | | | | |")
    return "\n".join(lines)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="suites: " + ", ".join(f"suite:{k}" for k in SUITES)
                                     + ", suite:williams, suite:snap (catalogue, those fetched)")
    parser.add_argument("sources", nargs="+", metavar="SOURCE",
                        help="folder, catalogue name, file, gen: spec, or suite:NAME")
    parser.add_argument("--device", choices=["auto", "cpu", "gpu"], default="auto")
    parser.add_argument("--kernels", default="all",
                        help="GPU kernels: 'all' or a comma list of spla.planning.spmv.KERNELS "
                             "(scalar,warp,vector,adaptive,adaptive2,segmented,auto,cusparse-cupy); cuSPARSE is always the "
                             "anchor. Ignored on the CPU (SciPy).")
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    parser.add_argument("--repeat", type=int, default=None, help="timed runs per kernel (default 20 CPU, 100 GPU)")
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "report")),
                        help="output folder (default $OUT or ./report)")
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    parser.add_argument("--no-spy", action="store_true", help="skip the per-matrix sparsity pictures")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        device = spla_report.resolve_device(args.device)
        sources = expand_sources(args.sources)
    except SplaError as exc:
        print(f"suite_report: error: {exc}", file=sys.stderr)
        return 2
    if not sources:
        print("suite_report: error: nothing to run", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    meta = metadata(args, device)
    matrices, analysis_table, kernel_table, failures, entries = [], [], [], [], []
    interrupted = False
    start = time.perf_counter()
    for position, source in enumerate(sources, 1):
        label = label_for(source)
        prefix = f"[{position}/{len(sources)}] {label}"
        print(f"{prefix}: loading ({time.perf_counter() - start:.0f} s elapsed)", file=sys.stderr, flush=True)
        try:
            t0 = time.perf_counter()
            A = spla.load(source)
            load_seconds = time.perf_counter() - t0
            result = spla.analyze(A)
            stats = analysis_row(label, source, result, load_seconds)
            print(f"{prefix}: {A.n_rows:,} x {A.n_cols:,}, nnz {A.nnz:,}; running SpMV on {device}",
                  file=sys.stderr, flush=True)
            rep = run_kernels(A, source, args)
        except KeyboardInterrupt:
            print(f"{prefix}: interrupted; writing what was measured", file=sys.stderr)
            interrupted = True
            break
        except (SplaError, MemoryError, OSError, ValueError, RuntimeError) as exc:
            message = " ".join(str(exc).split()) or type(exc).__name__
            print(f"{prefix}: FAILED, skipped: {message}", file=sys.stderr, flush=True)
            if not isinstance(exc, SplaError):
                traceback.print_exc(limit=3, file=sys.stderr)
            failures.append({"matrix": label, "source": source, "error": message})
            continue
        analysis_table.append(stats)
        rows = kernel_rows(label, stats, rep)
        for row in rows:
            row["flops"], row["bytes"] = rep["flops"], rep["bytes"]
        kernel_table += rows
        entries.append({"matrix": label, "source": source, "analysis": result, "report": rep,
                        "load_seconds": load_seconds})
        keep = None if args.no_spy else A
        matrices.append({"label": label, "lengths": np.diff(A.indptr), "matrix": keep})
        if device == "gpu" and "copy_bandwidth_gbps" in rep:
            meta["copy_bandwidth_gbps"] = rep["copy_bandwidth_gbps"]
        del A
    roof = meta.get("copy_bandwidth_gbps") if device == "gpu" else host_copy_bandwidth_gbps()
    meta["roofline_bandwidth_gbps"] = roof
    meta["seconds"] = time.perf_counter() - start
    write_json(args.out / "suite.json", {"meta": meta, "matrices": entries, "failures": failures,
                                         "interrupted": interrupted})
    write_csv(args.out / "analysis.csv", ANALYSIS_COLUMNS, analysis_table)
    write_csv(args.out / "kernels.csv", KERNEL_COLUMNS, kernel_table)
    pictures = [] if args.no_plots else plots(args.out, matrices, kernel_table, roof, device)
    print(f"\nSpMV suite on {meta['device_name']} ({args.dtype}), {meta['date']}\n")
    print(markdown_table(kernel_table, failures))
    print(f"\nwrote {args.out}/suite.json, analysis.csv, kernels.csv"
          + (f" and {len(pictures)} PNG plots" if pictures else "") + f" in {meta['seconds']:.1f} s"
          + (f"; {len(failures)} matrix(es) failed and were skipped" if failures else ""))
    if interrupted:
        return 130
    return 1 if failures and not entries else 0


if __name__ == "__main__":
    sys.exit(main())
