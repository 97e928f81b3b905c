#!/usr/bin/env python
"""Fit staged's tile-count threshold on the corpus's fit half; report it on every half.

The staged kernel (``kernels/spmv_staged.cu``) takes T nonzeros a thread, a tile of
``STAGED_THREADS * T`` a block. A larger T reads more a block and costs fewer blocks,
until the tiles are too few to fill the GPU: :func:`spla.planning.segmented.staged_default`
takes the largest T of the dtype (:func:`~spla.planning.segmented.staged_entries`) whose
tiles number at least ``STAGED_MIN_TILES``, else the smallest. This script reads
``bench_corpus.py`` results whose records carry the tuner's timings of ``staged:T`` at
every T, and for each threshold of a grid (the midpoints of the records' tile counts) a
record's quality is the best T's time over the picked T's (1.0 = the best). The
threshold is fitted on the fit halves; the table shows every half, so ``report`` holds
matrices it was not fitted to.

    PYTHONPATH=. python scripts/fit_staged.py docs/lab/h200-2026-12-04-session17/corpus-*.json*
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fit_auto import FIT_HALVES, HALVES, best_of, geomean, half_of, read_records  # noqa: E402

from spla.bench.timing import TUNED_SLACK, within  # noqa: E402
from spla.planning.segmented import STAGED_MIN_TILES, STAGED_THREADS, staged_default, staged_entries  # noqa: E402


def load(paths) -> list[dict]:
    """One item per (matrix, dtype) whose record timed staged at every T of its dtype; a later
    file's record of a matrix replaces an earlier one."""
    items: dict[tuple[str, str], dict] = {}
    for path in paths:
        for record in read_records(path):
            tune = record.get("tune") or {}
            # the rule's own candidate is named bare ("staged") with its T in "param"
            times = {c["param"]: c["us"] for c in tune.get("candidates", [])
                     if c["kernel"].partition(":")[0] == "staged" and c.get("status") == "ok"}
            if record.get("status") != "ok" or set(times) != set(staged_entries(record["dtype"])):
                continue
            items[record["name"], record["dtype"]] = {"name": record["name"], "half": half_of(record),
                                                      "dtype": record["dtype"], "nnz": int(tune["nnz"]), "times": times}
    return list(items.values())


def quality(item: dict, min_tiles: float) -> float:
    times = item["times"]
    return min(times.values()) / times[staged_default(item["dtype"], item["nnz"], min_tiles)]


def grid(items: list[dict]) -> list[float]:
    """0 (always the largest T), the geometric midpoints of the records' tile counts, and above."""
    counts = sorted({item["nnz"] / (STAGED_THREADS * t) for item in items for t in item["times"]})
    return [0.0] + [math.sqrt(a * b) for a, b in zip(counts, counts[1:])] + [counts[-1] * 2] if counts else [0.0]


def fit(items: list[dict]) -> tuple[float, float]:
    fitting = [i for i in items if i["half"] in FIT_HALVES]
    point, score = best_of([(m,) for m in grid(fitting)], lambda p: geomean(quality(i, p[0]) for i in fitting))
    return point[0], score


def table(items: list[dict], rules: dict) -> list[str]:
    lines = ["| rule | half | dtype | matrices | best T / picked T, geomean | worst | within 5% |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: |"]
    for label, min_tiles in rules.items():
        for half in HALVES:
            for dtype in ("float32", "float64"):
                values = [quality(i, min_tiles) for i in items if i["half"] == half and i["dtype"] == dtype]
                if values:
                    lines.append(f"| {label} | {half} | {dtype} | {len(values)} | {geomean(values):.3f} | "
                                 f"{min(values):.3f} | {sum(within(v, TUNED_SLACK) for v in values)}/{len(values)} |")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("files", nargs="+", type=Path, help="bench_corpus.py JSON results")
    args = parser.parse_args(argv)
    items = load(args.files)
    if not items:
        print("no record timed staged at every T (bench_corpus.py records with tuner candidates)", file=sys.stderr)
        return 1
    fitted, score = fit(items)
    print(f"fitted on the fit halves (geomean {score:.4f}): STAGED_MIN_TILES = {fitted:.0f} "
          f"(code: {STAGED_MIN_TILES}); {len(items)} (matrix, dtype) records\n")
    print("\n".join(table(items, {"largest T always": 0.0, "fitted": fitted, "code": STAGED_MIN_TILES})))
    return 0


if __name__ == "__main__":
    sys.exit(main())
