"""V1 on sets 49, 51 (fit) and 52 (test) and probe 48 (this folder's README), from time_turns.py's runs: for every
float32 matrix that lanes_for gives vector 2 lanes (zone_stats.json's vector_lanes; probe 48's local rows), its mean
row, near share and vector:4 over vector:2, and, with --mean M --near N, V1's gain where it acts.

    PYTHONPATH=. python3 docs/lab/h100-2026-12-06-session49/score_widths.py --stats zone_stats.json \\
        --turns T.json [T.json ...] [--mean M --near N]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np


def geomean(values) -> float:
    return float(np.exp(np.mean(np.log(values)))) if len(values) else float("nan")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stats", type=Path, required=True)
    parser.add_argument("--turns", type=Path, nargs="+", required=True)
    parser.add_argument("--mean", type=float, default=None)
    parser.add_argument("--near", type=float, default=None)
    args = parser.parse_args(argv)
    stats = json.loads(args.stats.read_text())
    rows = []
    for path in args.turns:
        times: dict = {}
        for r in json.loads(path.read_text())["results"]:
            if r["status"] == "ok" and r["dtype"] == "float32":
                times.setdefault(Path(r["source"]).stem, {})[r["kernel"]] = r["ms"]
        for name, t in sorted(times.items()):
            s = stats.get(f"{name}/float32")
            if s is None or s["vector_lanes"] != 2:
                continue
            rows.append((s["mean_row"], s["near"], name, t["vector:2"] / t["vector:4"], t["vector:2"] / t["vector:8"],
                         min(t.values()) / t["vector:2"]))
    acted = []
    for mean, near, name, four, eight, share in sorted(rows):
        acts = args.mean is not None and mean >= args.mean and near < args.near
        if acts:
            acted.append(four)
        print(f"  {name:24s} mean {mean:5.1f} near {near:.2f}  vector:4 over :2 {four:.3f}, :8 over :2 {eight:.3f}; "
              f"vector:2 {share:.2f} of the best{'  V1' if acts else ''}")
    if args.mean is not None:
        print(f"V1 (mean >= {args.mean}, near < {args.near}) where it acts ({len(acted)}): "
              f"geomean {geomean(acted):.3f}, worst {min(acted, default=float('nan')):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
