#!/usr/bin/env python
"""Fit the auto rule's free thresholds on the corpus's fit half; report the rule on every half.

Reads ``bench_corpus.py`` results (``PREFIX.json``: the device time of every
spla kernel and of cuSPARSE's CSR ALG1, per matrix and dtype) and the row statistics of each matrix (recorded by
``bench_corpus.py`` since session 8; for older results rebuilt here from the
corpus generators or the real files and kept in ``--stats`` as a cache).

For each matrix the rule picks a kernel family from its row statistics
(:func:`spla.planning.spmv.matrix_class`): one of spla's kernels, ``dia`` or
``band`` for large regular matrices the record timed it on, or the large irregular class's
kernel (``AUTO_RULE["irregular-large"]``: staged since session 17, cuSPARSE's CSR ALG1 before;
a record without it scores 0 there); its cost is that family's
device time (or, with ``--measure per-call``, the time a call from Python takes) at its default
parameter over the best of all of them. The fitted
thresholds (:data:`FITTED` of ``AutoThresholds``) are chosen on the fit set
only (the geomean of best/picked, higher is better): the corpus's ``fit`` half
and the real matrices of ``real-fit`` (half of them, by a hash of the name:
:func:`half_of`); the table then shows the rule on every half, so the figures
on ``report`` and ``real-report`` are for matrices the rule was not fitted to (as are those of
``held-out``: matrices outside the corpus, ``bench_corpus.py --sources``). Beside the whole fit,
the tables show the code's rule with each moved threshold alone (``code, NAME = VALUE``): the
whole fit can trade one half for another, so a move is read on its own before it is taken.

    PYTHONPATH=. python scripts/fit_auto.py docs/lab/h200-2026-12-03-session8/corpus-*.json* \\
        --stats docs/lab/h200-2026-12-03-session8/corpus-stats.json --real ../shared/matrices

Every run so far (sessions 8-18) is listed in docs/lab/h200-2026-12-04-session18/fit_auto_files.txt;
its README gives the command with the near-share cache (``--near-stats``) that spares rebuilds.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import gzip
import json
import math
import sys
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from spla.bench.timing import FIRST_CHOICE_SLACK, within  # noqa: E402
from spla.planning import rle  # noqa: E402
from spla.planning.spmv import (  # noqa: E402
    AUTO,
    SPLA_KERNELS,
    STRUCTURED_KERNELS,
    AutoThresholds,
    longest_row_steps,
    matrix_class,
    pack_entries,
    rule_choice,
)
from spla.planning.stats import RowStats  # noqa: E402

HALVES = ("fit", "report", "real-fit", "real-report", "held-out")  # held-out: bench_corpus.py --sources
FIT_HALVES = ("fit", "real-fit")
VENDOR_TIMED = "cusparse:1"  # the record row of the kernel auto's "cusparse" runs
ANCHORS = ("cusparse:1", "cusparse:2")  # the lean cuSPARSE call is the faster of the two
LARGE = 10**7  # the issue's large matrices start here (nonzeros)


def matrix_stats(record: dict, real: Path | None, cache: dict) -> RowStats | None:
    """Row statistics of the record's matrix: recorded, cached, or rebuilt (and cached)."""
    if "row_stats" in record:
        return RowStats(**record["row_stats"])
    from spla.planning.stats import row_stats

    stats = cached_from_matrix(record, real, cache, "stats", lambda A: dataclasses.asdict(row_stats(A)))
    return None if stats is None else RowStats(**stats)


def cached_from_matrix(record: dict, real: Path | None, cache: dict, what: str, compute):
    """``compute(A)`` of the record's matrix, kept in ``cache`` by the record's name: the matrix is
    rebuilt only on a miss (None where it cannot be, see :func:`rebuild`)."""
    key = record["name"]
    if key not in cache:
        A = rebuild(record, real)
        if A is None:
            return None
        cache[key] = compute(A)
        print(f"  {what} of {key}: {cache[key]}", file=sys.stderr, flush=True)
    return cache[key]


def record_near(record: dict, real: Path | None, cache: dict) -> float | None:
    """The record's near share: recorded, cached, or computed from the rebuilt matrix (and cached)."""
    if "near_share" in record:
        return record["near_share"]
    from spla.planning.stats import near_share

    return cached_from_matrix(record, real, cache, "near share", near_share)


def lazy_near(record: dict, real: Path | None, cache: dict) -> Callable[[], float]:
    """``near()``, the record's near share computed on the first call (the rule asks only for
    mid-size irregular matrices; older records lack it, and a rebuild costs seconds)."""
    @functools.cache
    def near() -> float:
        value = record_near(record, real, cache)
        if value is None:
            raise ValueError(f"{record['name']}: no near share recorded or cached, and no matrix to "
                             "compute it from (--real)")
        return value
    return near


def rebuild(record: dict, real: Path | None):
    """The record's matrix, rebuilt from its corpus family or its held-out source (a ``gen:``
    spec or file), or read from the real matrices' folder (None where that file is missing)."""
    import spla
    from spla.bench import corpus

    if record["half"] == "held-out":
        return spla.load(record["path"])
    if record["half"] != "real":
        return corpus.build(record["family"], int(record["nnz_target"]))
    path = Path(record.get("path", ""))
    if real is not None:
        path = real / path.name
    return spla.load(str(path)) if path.is_file() else None


def read_records(path) -> list[dict]:
    """A benchmark file's records: bench_corpus.py's JSON, or that JSON gzipped (``.json.gz``, as
    the lab keeps its larger records since session 36: the device tool copies the tree)."""
    path = Path(path)
    text = gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()
    return json.loads(text).get("records", [])


def read_spans(path: Path | None) -> dict:
    """record name -> {"span": median tile span, "lines": median lines of x a tile reads}, from
    row_spans.py's JSON (empty without a file; "lines" only where the file has it)."""
    if path is None:
        return {}
    return {name: {"span": v["tile_span_median"], **({"lines": v["tile_lines_median"]} if "tile_lines_median" in v else {})}
            for name, v in json.loads(Path(path).read_text()).items()}


def _tile_stat(record: dict, spans: dict, key: str) -> Callable[[], float] | None:
    """The record's tile ``key`` ("span" or "lines") as the rule asks it: recorded (bench_corpus.py
    records tile_span since session 36, tile_lines since session 38), or from ``spans``; None where
    neither has it."""
    value = record.get(f"tile_{key}", spans.get(record["name"], {}).get(key))
    return None if value is None else (lambda: value)


def load(paths, real: Path | None, stats_path: Path | None, measure: str = "device_us",
         near_cache: dict | None = None, spans: dict | None = None) -> list[dict]:
    """One item per (matrix, dtype): half, stats, near share (lazy; kept in ``near_cache``), tile
    span and lines (recorded, or from ``spans``: :func:`read_spans` of
    docs/lab/cpu-2026-12-05-session36/row_spans.py's output; None where not known: the rule then
    keeps packed rows packed) and the device time of every kernel family; a matrix measured in several
    files takes the last file's record (a re-run after a kernel change)."""
    spans = spans or {}
    near_cache = {} if near_cache is None else near_cache
    cache = json.loads(stats_path.read_text()) if stats_path and stats_path.is_file() else {}
    items: dict[tuple[str, str], dict] = {}
    for path in paths:
        for record in read_records(path):
            if record.get("status") != "ok":
                continue
            times = {r["kernel"]: r[measure] for r in record["rows"]
                     if r["kernel"] in (*SPLA_KERNELS, *STRUCTURED_KERNELS) and measure in r}
            vendor = {r["kernel"]: r[measure] for r in record["rows"] if r["kernel"] in ANCHORS and measure in r}
            if VENDOR_TIMED in vendor:  # what auto's "cusparse" runs (CSR ALG1)
                times["cusparse"] = vendor[VENDOR_TIMED]
            stats = matrix_stats(record, real, cache)
            if stats is None or not times:
                continue
            items[record["name"], record["dtype"]] = {
                "name": record["name"], "half": half_of(record), "dtype": record["dtype"], "stats": stats,
                "pack": pack_entries(record["dtype"], record["index_dtype"]),
                "x_bytes": x_bytes(record),
                "near": lazy_near(record, real, near_cache),
                "span": _tile_stat(record, spans, "span"), "lines": _tile_stat(record, spans, "lines"),
                "times": times, "anchor": min(vendor.values()) if vendor else None,
                "mean_run": record.get("mean_run")}
    if stats_path is not None:
        stats_path.write_text(json.dumps(cache, indent=1, sort_keys=True))
    return list(items.values())


def x_bytes(record: dict) -> float:
    """Bytes of the record's x (its columns times the value size); unbounded where the record
    does not say (the rule then treats x as large)."""
    cols = record.get("matrix", {}).get("cols")
    return math.inf if cols is None else cols * np.dtype(record["dtype"]).itemsize


def half_of(record: dict) -> str:
    """The corpus's own half of a generated matrix; a real matrix goes to ``real-fit`` or
    ``real-report`` by the parity of a CRC of its name (stable across runs and machines)."""
    if record["half"] != "real":
        return record["half"]
    return "real-fit" if zlib.crc32(record["name"].encode()) % 2 == 0 else "real-report"


def picked(item: dict, t: AutoThresholds) -> str:
    """The rule's kernel (spla.planning.spmv.rule_choice) under thresholds t, a structured kernel
    (dia, band, rle) taken where the record timed it: bench_corpus.py times them only on matrices
    that have their structure. rle also needs the record's mean run (where it carries one) to reach
    today's rle.AUTO_MIN_RUN: bench_corpus.py times rle from the tuner's shorter cut, and older records
    from older cuts."""
    def has_structure(name: str) -> bool:
        if name == "rle" and item.get("mean_run") is not None:
            return name in item["times"] and item["mean_run"] >= rle.AUTO_MIN_RUN
        return name in item["times"]

    return rule_choice(item["stats"], item["pack"], item["near"], has_structure, t, item["x_bytes"],
                       span=item.get("span"), lines=item.get("lines"))


def _class(item: dict, t: AutoThresholds) -> str:
    return matrix_class(item["stats"], item["pack"], item["near"], t, item["x_bytes"], span=item.get("span"),
                        lines=item.get("lines"))


def quality(item: dict, t: AutoThresholds) -> float:
    """Best device time (spla's kernels and cuSPARSE ALG1, where the record has it) over the picked
    family's (1.0 = the rule picked the best)."""
    times = item["times"]
    return min(times.values()) / times.get(picked(item, t), math.inf)


def geomean(values) -> float:
    """Geometric mean; 0 when any value is 0 (a rule picking a kernel the record did not time)."""
    values = list(values)
    if not values:
        return float("nan")
    if min(values) <= 0:
        return 0.0
    return math.exp(sum(map(math.log, values)) / len(values))


FITTED = ("segmented_mean", "short_rows", "large_nnz", "narrow_steps", "huge_share", "mid_nnz", "mid_near",
          "tiny_mean", "cached_x_bytes", "staged_x_bytes")
NEVER = 2**62  # large_nnz (mid_nnz) of a rule that never sends a matrix to the large (mid) irregular class


def _midpoints(values) -> list[float]:
    """Geometric midpoints between the sorted distinct values, with one point below and one above."""
    values = sorted(set(values))
    if not values:
        return [0.0]
    return [0.0] + [math.sqrt(a * b) for a, b in zip(values, values[1:]) if a > 0] + [values[-1] * 2]


def best_of(grid, score) -> tuple[tuple, float]:
    """The grid point of highest score; of equal scores, the median one."""
    scores = [(score(point), point) for point in grid]
    best = max(value for value, _ in scores)
    ties = [point for value, point in scores if value >= best - 1e-12]
    return ties[len(ties) // 2], best


def fit(items: list[dict]) -> tuple[AutoThresholds, float]:
    """The thresholds of :data:`FITTED` maximising the fit set's geomean quality, each over
    the midpoints between the values of the fit set's matrices it decides (the irregular ones'
    mean rows, the short ones' rows, ...): (segmented_mean, short_rows) as one grid, then
    narrow_steps (over the steps of the irregular matrices' longest rows, or 0), then (mid_nnz,
    mid_near) as one grid (over their sizes and near shares; never, with the code's mid_near, which
    also guards regular-large, unless a finite pair scores higher; mid_near then halfway across the
    near shares that tie), then
    large_nnz (over their sizes, or never) together with huge_share (over the huge-row matrices'
    longest row over nnz; infinite, as in the code before it was fitted, unless a finite one
    scores higher), then tiny_mean (over the many-row short matrices' mean rows; 0, no short-tiny
    class, unless one scores higher) and (cached_x_bytes, staged_x_bytes) (over the x sizes of the
    large regular matrices; never, no regular-large class, unless a pair scores higher), then all
    again given the others. mid before large: the large class takes any near share, so a large_nnz
    fitted first would take the matrices mid_near keeps out."""
    fit_items = [i for i in items if i["half"] in FIT_HALVES]

    def score(t):
        return geomean(quality(i, t) for i in fit_items)

    no_share = dataclasses.replace(AUTO, huge_share=math.inf)
    irregular = [i for i in fit_items if _class(i, no_share).startswith("irregular")]
    # each threshold over the midpoints of the matrices it decides, so a tie between two of them
    # lands halfway (not wherever the rows of an unrelated matrix put a grid point)
    short = [i["stats"] for i in fit_items if _class(i, AUTO) in ("short", "short-tiny", "short-few-rows")]
    pairs = [(m, int(r)) for m in _midpoints(i["stats"].mean for i in irregular)
             for r in _midpoints(s.n_rows for s in short)]
    sizes = [int(v) for v in _midpoints(i["stats"].nnz for i in irregular)[1:]] + [NEVER]
    steps = _midpoints(longest_row_steps(i["stats"], i["pack"]) for i in irregular)
    nears = _midpoints(i["near"]() for i in irregular)[1:]
    shares = _midpoints(s.max / s.nnz for s in (i["stats"] for i in fit_items) if s.max > AUTO.huge_row)[1:]
    t = dataclasses.replace(AUTO, large_nnz=NEVER, narrow_steps=0.0, huge_share=math.inf, mid_nnz=NEVER,
                            tiny_mean=0.0, cached_x_bytes=NEVER, staged_x_bytes=NEVER)
    for _ in range(2):
        (m, r), _ = best_of(pairs, lambda p: score(dataclasses.replace(t, segmented_mean=p[0], short_rows=p[1])))
        t = dataclasses.replace(t, segmented_mean=m, short_rows=r)
        (w,), best = best_of([(w,) for w in steps], lambda p: score(dataclasses.replace(t, narrow_steps=p[0])))
        t = dataclasses.replace(t, narrow_steps=w)
        # off: no mid class, the code's mid_near (which also guards regular-large)
        t, best = _off_unless_better(t, score, ("mid_nnz", "mid_near"), (NEVER, AUTO.mid_near),
                                     [(n, c) for n in sizes[:-1] for c in nears])
        if t.mid_nnz != NEVER:  # mid_near halfway (geometrically) across the near shares that score as well
            def near_score(c):
                return score(dataclasses.replace(t, mid_near=c))
            tied = [v for v in nears if near_score(v) >= best - 1e-12]
            middle = math.sqrt(min(tied) * max(tied))
            if near_score(middle) >= best - 1e-12:
                t = dataclasses.replace(t, mid_near=middle)
        # large_nnz and huge_share together (huge_share only matters from large_nnz on); an
        # infinite huge_share (every large huge-row matrix runs the large class's kernel) unless a finite one
        # scores higher on the fit set
        def large_score(p):
            return score(dataclasses.replace(t, large_nnz=p[0], huge_share=p[1]))
        (v, h), best = best_of([(v, h) for v in sizes for h in [*shares, math.inf]], large_score)
        (v_inf, _), never = best_of([(v, math.inf) for v in sizes], large_score)
        if best <= never + 1e-12:
            v, h, best = v_inf, math.inf, never
        t = dataclasses.replace(t, large_nnz=v, huge_share=h)
        short_means = [i["stats"].mean for i in fit_items if _class(i, dataclasses.replace(t, tiny_mean=0.0)) == "short"]
        t, best = _off_unless_better(t, score, ("tiny_mean",), (0.0,), [(m,) for m in _midpoints(short_means)[1:]])
        no_x = dataclasses.replace(t, cached_x_bytes=NEVER, staged_x_bytes=NEVER)
        x_sizes = [int(x) for x in _midpoints(i["x_bytes"] for i in fit_items if i["stats"].nnz >= t.large_nnz
                                              and _class(i, no_x) in ("short", "short-tiny", "medium"))[1:]]
        t, best = _off_unless_better(t, score, ("cached_x_bytes", "staged_x_bytes"), (NEVER, NEVER),
                                     [(a, b) for a in x_sizes for b in [*x_sizes, NEVER] if b >= a])
    return t, best


def _off_unless_better(t: AutoThresholds, score, names: tuple, off: tuple, grid: list) -> tuple[AutoThresholds, float]:
    """The thresholds ``names`` at the ``grid`` point of best fit score, kept at ``off`` (their
    class switched off) unless a grid point scores higher: no class without evidence for it."""
    def at(point):
        return dataclasses.replace(t, **dict(zip(names, point)))
    point, best = best_of(grid or [off], lambda p: score(at(p)))
    off_score = score(at(off))
    if best <= off_score + 1e-12:
        point, best = off, off_score
    return at(point), best


def table(items: list[dict], rules: dict[str, AutoThresholds], measure: str = "device") -> list[str]:
    lines = [f"| rule | half | dtype | matrices | best / auto's pick ({measure}), geomean | worst | within 15% |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: |"]
    for label, t in rules.items():
        for half in HALVES:
            for dtype in ("float32", "float64"):
                group = [i for i in items if i["half"] == half and i["dtype"] == dtype]
                if not group:
                    continue
                q = [quality(i, t) for i in group]
                lines.append(f"| {label} | {half} | {dtype} | {len(group)} | {geomean(q):.3f} | {min(q):.3f} | "
                             f"{sum(within(v, FIRST_CHOICE_SLACK) for v in q)}/{len(q)} |")
    return lines


def large_table(items: list[dict], rules: dict[str, AutoThresholds], measure: str = "device") -> list[str]:
    """Each rule's pick over the lean cuSPARSE call (faster of ALG1/ALG2) on the matrices of at least
    LARGE nonzeros, every half together (the issue's large-matrix target)."""
    lines = [f"| rule | dtype | matrices >= {LARGE:.0e} nnz | auto over lean cuSPARSE ({measure}), geomean | worst |",
             "| --- | --- | ---: | ---: | ---: |"]
    for label, t in rules.items():
        for dtype in ("float32", "float64"):
            group = [i for i in items if i["dtype"] == dtype and i["anchor"] and i["stats"].nnz >= LARGE]
            speedups = [i["anchor"] / i["times"].get(picked(i, t), math.inf) for i in group]
            if speedups:
                lines.append(f"| {label} | {dtype} | {len(group)} | {geomean(speedups):.3f} | {min(speedups):.3f} |")
    return lines


def one_at_a_time(fitted: AutoThresholds) -> dict[str, AutoThresholds]:
    """The code's rule with one fitted threshold at a time, for each that the fit moved: a move is
    worth taking only where its gain on the fit half costs nothing on the halves it was not fitted
    to (the whole fit can trade one half for another: BENCHMARKS.md, session 23)."""
    return {f"code, {name} = {getattr(fitted, name):g}": dataclasses.replace(AUTO, **{name: getattr(fitted, name)})
            for name in FITTED if getattr(fitted, name) != getattr(AUTO, name)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="+", type=Path, help="bench_corpus.py PREFIX.json files")
    parser.add_argument("--stats", type=Path, default=None, help="row-statistics cache (JSON), read and updated")
    parser.add_argument("--real", type=Path, default=None, help="folder of the real matrices, for their statistics")
    parser.add_argument("--near-stats", type=Path, default=None,
                        help="near-share cache (JSON), read and updated: for records older than session 15")
    parser.add_argument("--spans", type=Path, default=None,
                        help="tile spans by record name (row_spans.py's JSON); without them packed rows stay packed")
    parser.add_argument("--measure", choices=("device", "per-call"), default="device",
                        help="the time each kernel is scored by: its device time (default), or the time a call "
                             "from Python takes, host included (out= preallocated)")
    args = parser.parse_args(argv)
    near_cache = json.loads(args.near_stats.read_text()) if args.near_stats and args.near_stats.is_file() else {}
    items = load(args.results, args.real, args.stats, "device_us" if args.measure == "device" else "per_call_us",
                 near_cache, read_spans(args.spans))
    fitted, score = fit(items)
    print(f"fitted on the fit set (fit and real-fit halves; geomean auto/best {score:.3f}): "
          + ", ".join(f"{name} = {getattr(fitted, name):g} (code: {getattr(AUTO, name):g})" for name in FITTED) + "\n")
    # the rule before session 8: none of its classes; "no staged class": neither irregular-large nor
    # irregular-mid (session 8's rule with later thresholds)
    before = dataclasses.replace(AUTO, segmented_mean=0.0, short_rows=0, long_mean=math.inf, large_nnz=NEVER,
                                 narrow_steps=0.0, huge_share=math.inf, mid_nnz=NEVER)
    own = dataclasses.replace(fitted, large_nnz=NEVER, mid_nnz=NEVER)
    rules = {"before": before, "fitted, no staged class": own, "fitted": fitted, "code": AUTO,
             **one_at_a_time(fitted)}
    print("\n".join(table(items, rules, args.measure)))
    print("\n" + "\n".join(large_table(items, rules, args.measure)))
    losers = [(quality(i, rules["fitted"]), i) for i in items]
    losers = sorted(((q, i) for q, i in losers if not within(q, FIRST_CHOICE_SLACK)), key=lambda pair: pair[0])
    if losers:
        print("\nmatrices where the fitted rule is more than 15% behind the best kernel:")
        for q, i in losers:
            best = min(i["times"], key=i["times"].get)
            print(f"  {i['name']} {i['dtype']} ({i['half']}): picks {picked(i, rules['fitted'])} "
                  f"({q:.2f} of {best})")
    if args.near_stats is not None:
        args.near_stats.write_text(json.dumps(near_cache, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
