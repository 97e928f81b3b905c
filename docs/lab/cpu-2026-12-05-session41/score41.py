"""P4b's scoring (call 3's palette-ladder41.json): where dia's palette pays its detection back within
100 calls, the cut that separates those runs on the fit families (the 7- and 27-point stencils), and
how that cut does on the report families (5-, 9- and 25-point). Two rules are scored: the values'
bytes alone, and the bytes a dia call touches (values, x and y), which is what L2 holds between calls.

    python3 score41.py palette-ladder41.json [--calls 100]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

FIT = ("stencil7", "stencil27")
DIAGONALS = {"stencil5": 5, "stencil7": 7, "stencil9": 9, "stencil25": 25, "stencil27": 27}


def runs(path: Path, calls: int) -> list[dict]:
    out = []
    for r in json.loads(path.read_text()):
        family = r["source"].split(":")[1]
        itemsize = 4 if r["dtype"] == "float32" else 8
        rows = r["values_bytes"] / itemsize / DIAGONALS[family]
        saved_us = statistics.median(r["values_us"]) - statistics.median(r["palette_us"])
        out.append({**r, "family": family, "fit": family in FIT, "values_mb": r["values_bytes"] / 1e6,
                    "touched_mb": (r["values_bytes"] + 2 * rows * itemsize) / 1e6,
                    "pays": saved_us * calls >= r["detection_ms"] * 1e3,
                    "repaid": r["detection_ms"] * 1e3 / saved_us if saved_us > 0 else float("inf")})
    return out


def best_cut(fit: list[dict], key: str) -> tuple[float, int]:
    """The cut (MB) with the fewest fit runs on the wrong side, the middle of its interval."""
    sizes = sorted({r[key] for r in fit})
    candidates = [(a + b) / 2 for a, b in zip(sizes, sizes[1:])]
    scored = [(sum((r[key] >= c) != r["pays"] for r in fit), c) for c in candidates]
    fewest = min(e for e, _ in scored)
    best = [c for e, c in scored if e == fewest]
    # the widest run of equally good cuts: its middle
    return (best[0] + best[-1]) / 2 if best == [c for c in candidates if best[0] <= c <= best[-1]] else best[0], fewest


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ladder", type=Path)
    parser.add_argument("--calls", type=int, default=100)
    args = parser.parse_args(argv)
    all_runs = runs(args.ladder, args.calls)
    for dtype in ("float32", "float64", None):
        chosen = [r for r in all_runs if dtype is None or r["dtype"] == dtype]
        fit, report = [r for r in chosen if r["fit"]], [r for r in chosen if not r["fit"]]
        for key in ("values_mb", "touched_mb"):
            cut, fit_wrong = best_cut(fit, key)
            wrong = [r for r in report if (r[key] >= cut) != r["pays"]]
            print(f"{dtype or 'both dtypes'} by {key}: cut {cut:.1f} MB, fit wrong {fit_wrong}/{len(fit)}, "
                  f"report wrong {len(wrong)}/{len(report)}: "
                  + ", ".join(f"{r['source']} {r['dtype']} {r[key]:.1f} MB repaid in {r['repaid']:.0f}" for r in wrong))
    print("\nruns near the cuts (24-50 MB touched):")
    for r in sorted(all_runs, key=lambda r: r["touched_mb"]):
        if 20 <= r["touched_mb"] <= 50:
            print(f"  {r['source']:24s} {r['dtype']} values {r['values_mb']:5.1f} MB touched {r['touched_mb']:5.1f} MB "
                  f"repaid in {r['repaid']:7.0f} ({'pays' if r['pays'] else 'no'}) {'fit' if r['fit'] else 'report'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
