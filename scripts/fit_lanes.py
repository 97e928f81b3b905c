#!/usr/bin/env python
"""Fit the lanes rule's two thresholds on the corpus's fit half; report them on every half.

The warp and vector kernels give each row a group of lanes; ``lanes_for`` picks the
width from the mean row length, one step a row where the columns are scattered. Two
thresholds are fitted here:

``FILL_THREADS``
    On a matrix with few rows the width doubles while rows x width is under it, at most
    ``LANE_DOUBLINGS`` times (:func:`spla.planning.spmv.widen`).
``SCATTERED_NEAR``
    Rows whose neighbouring entries' columns are rarely close
    (:func:`spla.planning.stats.near_share` below it) read a whole row in one step.

It reads ``bench_corpus.py`` results whose records carry the tuner's candidates: the
device time of warp and vector at the rule's width and at its two neighbours. A record
names each candidate's width (``param``); records made before session 13 name the
rule's width bare (``"vector"``), and for them it is ``lanes_for`` without the fill or
the scattered step (the rule of that time). A record's near share is recorded (since
session 15) or computed from the rebuilt matrix and kept in ``--stats``. For each
matrix, dtype and family, a rule's quality is the best measured width's time over the
time of the width it picks (1.0 = the best); where the record did not time the width
it picks, the widest timed width on the way. The thresholds are fitted on the fit
halves (the corpus's ``fit`` families and ``real-fit``, as in ``fit_auto.py``), both
over one grid; the tables show every half,
so ``report`` and ``real-report`` are matrices they were not fitted to. vector's 4 lanes on
float32 rows of 28 and more (:func:`spla.planning.spmv.vector_widens`, session 49) sit outside
``lanes_for``: this script scores them as the code picks them and does not fit them.

    PYTHONPATH=. python scripts/fit_lanes.py docs/lab/h200-2026-12-0*/corpus-*.json* \\
        --stats docs/lab/h200-2026-12-04-session15/near-stats.json --real ../shared/matrices
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fit_auto import FIT_HALVES, HALVES, best_of, geomean, half_of, read_records, record_near  # noqa: E402

from spla.bench.timing import TUNED_SLACK, within  # noqa: E402
from spla.planning.spmv import (  # noqa: E402
    FILL_THREADS,
    SCATTERED_MIN_X_BYTES,
    SCATTERED_NEAR,
    lanes_for,
    pack_entries,
    vector_widens,
    widen,
)

FAMILIES = ("warp", "vector")
GRID = [0] + [m * 2**k for k in range(12, 22) for m in (2, 3)]  # 0: never double


def load(paths, real: Path | None = None, stats_path: Path | None = None) -> list[dict]:
    """One item per (matrix, dtype, family) with at least two widths timed; a later file's
    record of a matrix replaces an earlier one's."""
    cache = json.loads(stats_path.read_text()) if stats_path and stats_path.is_file() else {}
    items: dict[tuple, dict] = {}
    for path in paths:
        for record in read_records(path):
            tune = record.get("tune")
            if record.get("status") != "ok" or "row_stats" not in record or not isinstance(tune, dict):
                continue
            stats = record["row_stats"]
            for family in FAMILIES:
                step = pack_entries(np.dtype(record["dtype"]), np.dtype(record.get("index_dtype", "int32"))) \
                    if family == "vector" else 1
                rule = lanes_for(stats["mean"], step)  # the width a bare name meant before session 13
                times = {}
                for row in tune.get("candidates", []):
                    name = row["kernel"]
                    if row.get("status") != "ok" or name.split(":")[0] != family:
                        continue
                    width = row.get("param") or (int(name.split(":")[1]) if ":" in name else rule)
                    times[width] = row["us"]
                if rule not in times or len(times) < 2:
                    continue
                near = record_near(record, real, cache)
                if near is None:
                    continue
                items[record["name"], record["dtype"], family] = {
                    "name": record["name"], "dtype": record["dtype"], "family": family,
                    "half": half_of(record), "rows": stats["n_rows"], "mean": stats["mean"], "step": step,
                    "near": near, "times": times,
                    "x_bytes": record["matrix"]["cols"] * np.dtype(record["dtype"]).itemsize}
    if stats_path is not None:
        stats_path.write_text(json.dumps(cache, indent=1, sort_keys=True))
    return list(items.values())


def picked(item: dict, fill: int, scattered_near: float = SCATTERED_NEAR) -> int:
    scattered = item["near"] < scattered_near and item["x_bytes"] > SCATTERED_MIN_X_BYTES
    width = lanes_for(item["mean"], item["step"], scattered=scattered)
    width = widen(width, item["rows"], fill)
    if item["family"] == "vector" and vector_widens(width, item["mean"], item["step"], lambda: item["near"]):
        width = 4
    while width not in item["times"]:
        width //= 2
    return width


def quality(item: dict, fill: int, scattered_near: float = SCATTERED_NEAR) -> float:
    times = item["times"]
    return min(times.values()) / times[picked(item, fill, scattered_near)]


def near_grid(items: list[dict]) -> list[float]:
    """0 (no matrix scattered) and the midpoints between the fit halves' distinct near shares."""
    shares = sorted({round(i["near"], 4) for i in items if i["half"] in FIT_HALVES})
    return [0.0] + [round((a + b) / 2, 4) for a, b in zip(shares, shares[1:])]


def fit(items: list[dict]) -> tuple[float, int]:
    """(SCATTERED_NEAR, FILL_THREADS) of best geomean quality on the fit halves, over both grids."""
    fit_items = [i for i in items if i["half"] in FIT_HALVES]
    (share, fill), _ = best_of([(share, fill) for share in near_grid(items) for fill in GRID],
                               lambda p: geomean(quality(i, p[1], p[0]) for i in fit_items))
    return share, fill


def _row(items, label, fill, share) -> str:
    cells = []
    for half in HALVES:
        q = [quality(i, fill, share) for i in items if i["half"] == half]
        cells.append(f"{geomean(q):.3f}, {sum(within(v, TUNED_SLACK) for v in q)}/{len(q)}" if q else "-")
    return f"| {label} | " + " | ".join(cells) + " |"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="+", type=Path, help="bench_corpus.py PREFIX.json files")
    parser.add_argument("--stats", type=Path, default=None, help="near-share cache (JSON), read and updated")
    parser.add_argument("--real", type=Path, default=None, help="folder of the real matrices, for their near shares")
    args = parser.parse_args(argv)
    items = load(args.results, args.real, args.stats)
    if not items:
        print("no record carries the tuner's candidates", file=sys.stderr)
        return 1
    share, fill = fit(items)
    print(f"fitted on the fit halves: SCATTERED_NEAR = {share:g} (code: {SCATTERED_NEAR:g}), "
          f"FILL_THREADS = {fill} (code: {FILL_THREADS}); {len(items)} (matrix, dtype, family) items\n")
    header = " | ".join(f"{h}: geomean, within 5%" for h in HALVES)
    print(f"| scattered below (fill {fill}) | {header} |\n| --- |" + " ---: |" * len(HALVES))
    grid = near_grid(items)
    for value in sorted({0.0, share, SCATTERED_NEAR, *grid[:: max(1, len(grid) // 8)]}):
        label = ("never" if value == 0 else f"{value:g}") + (" (fitted)" if value == share else "") + \
            (" (code)" if value == SCATTERED_NEAR else "")
        print(_row(items, label, fill, value))
    print(f"\n| fill threshold (scattered below {share:g}) | {header} |\n| --- |" + " ---: |" * len(HALVES))
    for value in sorted({0, fill, FILL_THREADS, *GRID[1::4]}):
        label = ("never" if value == 0 else f"{value}") + (" (fitted)" if value == fill else "") + \
            (" (code)" if value == FILL_THREADS else "")
        print(_row(items, label, value, share))
    return 0 if math.isfinite(geomean(quality(i, fill, share) for i in items)) else 1


if __name__ == "__main__":
    sys.exit(main())
