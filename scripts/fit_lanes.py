#!/usr/bin/env python
"""Fit the lanes rule's fill threshold on the corpus's fit half; report it on every half.

The warp and vector kernels give each row a group of lanes; ``lanes_for`` picks the
width from the mean row length. On a matrix with few rows that leaves the GPU short of
threads, so the width doubles while rows x width is under ``FILL_THREADS``, at most
``LANE_DOUBLINGS`` times (:func:`spla.planning.spmv.widen`). This script fits that
threshold.

It reads ``bench_corpus.py`` results whose records carry the tuner's candidates: the
device time of warp and vector at the rule's width and at its two neighbours. A record
names each candidate's width (``param``); records made before session 13 name the
rule's width bare (``"vector"``), and for them it is ``lanes_for`` without the fill
(the rule of that time). For each matrix, dtype and family, a threshold's quality is
the best measured width's time over the time of the width it picks (1.0 = the best);
where the record did not time the width it picks, the widest timed width on the way. The threshold is fitted
on the fit halves (the corpus's ``fit`` families and ``real-fit``, as in
``fit_auto.py``); the table shows every half, so ``report`` and ``real-report`` are
matrices it was not fitted to.

    PYTHONPATH=. python scripts/fit_lanes.py docs/lab/h200-2026-12-03-session1[0-3]/corpus-*.json
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

from fit_auto import FIT_HALVES, HALVES, geomean, half_of  # noqa: E402

from spla.planning.spmv import FILL_THREADS, lanes_for, pack_entries, widen  # noqa: E402

FAMILIES = ("warp", "vector")
GRID = [0] + [m * 2**k for k in range(12, 22) for m in (2, 3)]  # 0: never double
NEAR = 0.95  # a pick within 5% of the best width


def load(paths) -> list[dict]:
    """One item per (matrix, dtype, family) with at least two widths timed; a later file's
    record of a matrix replaces an earlier one's."""
    items: dict[tuple, dict] = {}
    for path in paths:
        for record in json.loads(Path(path).read_text())["records"]:
            tune = record.get("tune")
            if record.get("status") != "ok" or "row_stats" not in record or not isinstance(tune, dict):
                continue
            stats = record["row_stats"]
            for family in FAMILIES:
                step = pack_entries(np.dtype(record["dtype"]), np.dtype(record.get("index_dtype", "int32"))) \
                    if family == "vector" else 1
                rule = lanes_for(stats["mean"], step)  # the width a bare name meant before the fill rule
                times = {}
                for row in tune.get("candidates", []):
                    name = row["kernel"]
                    if row.get("status") != "ok" or name.split(":")[0] != family:
                        continue
                    width = row.get("param") or (int(name.split(":")[1]) if ":" in name else rule)
                    times[width] = row["us"]
                if rule in times and len(times) > 1:
                    items[record["name"], record["dtype"], family] = {
                        "name": record["name"], "dtype": record["dtype"], "family": family,
                        "half": half_of(record), "rows": stats["n_rows"], "rule": rule, "times": times}
    return list(items.values())


def picked(item: dict, fill: int) -> int:
    width = widen(item["rule"], item["rows"], fill)
    while width not in item["times"]:
        width //= 2
    return width


def quality(item: dict, fill: int) -> float:
    times = item["times"]
    return min(times.values()) / times[picked(item, fill)]


def fit(items: list[dict]) -> int:
    """The grid's threshold of best geomean quality on the fit halves (the median one of ties)."""
    fit_items = [i for i in items if i["half"] in FIT_HALVES]
    scores = [(round(geomean(quality(i, f) for i in fit_items), 6), f) for f in GRID]
    best = max(score for score, _ in scores)
    ties = [f for score, f in scores if score == best]
    return ties[len(ties) // 2]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="+", type=Path, help="bench_corpus.py PREFIX.json files")
    args = parser.parse_args(argv)
    items = load(args.results)
    if not items:
        print("no record carries the tuner's candidates", file=sys.stderr)
        return 1
    fitted = fit(items)
    print(f"fitted on the fit halves: FILL_THREADS = {fitted} (code: {FILL_THREADS}); "
          f"{len(items)} (matrix, dtype, family) items\n")
    print("| fill threshold | " + " | ".join(f"{h}: geomean, within 5%" for h in HALVES) + " |")
    print("| --- |" + " ---: |" * len(HALVES))
    for fill in sorted({0, fitted, FILL_THREADS, *GRID[1::4]}):
        cells = []
        for half in HALVES:
            q = [quality(i, fill) for i in items if i["half"] == half]
            cells.append(f"{geomean(q):.3f}, {sum(v >= NEAR for v in q)}/{len(q)}" if q else "-")
        label = "never" if fill == 0 else f"{fill}" + (" (fitted)" if fill == fitted else "") + \
            (" (code)" if fill == FILL_THREADS else "")
        print(f"| {label} | " + " | ".join(cells) + " |")
    return 0 if math.isfinite(geomean(quality(i, fitted) for i in items)) else 1


if __name__ == "__main__":
    sys.exit(main())
