"""W2 of this folder's README: float32 rle's width from the row's length and whether a tile's rows share lines
of x (spla.planning.stats.tile_lines), against band_lanes, from time_turns.py runs that timed staged, rle at
2-16 lanes and both cuSPARSE algorithms. Over the float32 matrices where the two differ: rle time at
band_lanes over rle time at W2's width; then, with auto's cut (runs of --cut), rle at W2's width over staged
where auto runs rle.

    PYTHONPATH=. python3 docs/lab/h100-2026-12-06-session48/score48.py TURNS.json ... --runs RUNS.json ... \\
        --lines NEIGHBOUR_STATS.json ... [--min-row 29] [--shared 0.01] [--cut 16]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "h200-2026-12-06-session46"))
import score46  # noqa: E402


def w2(mean_row: float, lines: float, min_row: float, shared: float) -> int:
    """band_lanes in float32, but 4 lanes (a warp of 8 rows) where band_lanes gives 2, rows hold at least
    min_row entries and a tile's entries gather from more than shared x its count of lines."""
    band = score46.band_lanes(mean_row, 4)
    return 4 if band == 2 and mean_row >= min_row and lines > shared else band


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("turns", type=Path, nargs="+")
    parser.add_argument("--runs", type=Path, nargs="+", required=True)
    parser.add_argument("--lines", type=Path, nargs="+", required=True)
    parser.add_argument("--min-row", type=float, default=29.0)
    parser.add_argument("--shared", type=float, default=0.01)
    parser.add_argument("--cut", type=float, default=16.0)
    args = parser.parse_args(argv)
    ms, stats = score46.load(args.turns, args.runs)
    lines = {name: s["lines"] for path in args.lines for name, s in json.loads(path.read_text()).items()}
    moved, band_gain, w2_gain = [], [], []
    for (name, dtype), t in sorted(ms.items()):
        if dtype != "float32":
            continue
        row = stats[name]["mean_row"]
        band, mine = score46.band_lanes(row, 4), w2(row, lines[name], args.min_row, args.shared)
        if band != mine:
            moved.append(t[f"rle:{band}"] / t[f"rle:{mine}"])
            print(f"  {name}: row {row:.1f}, lines {lines[name]:.4f}: band {band}, W2 {mine}: {moved[-1]:.3f}")
        if stats[name]["mean_run"] >= args.cut:
            band_gain.append(t["staged"] / t[f"rle:{band}"])
            w2_gain.append(t["staged"] / t[f"rle:{mine}"])
    print(f"float32, W2 over band_lanes where they differ ({len(moved)}): geomean {score46.geomean(moved):.3f}, "
          f"worst {min(moved, default=float('nan')):.3f}")
    for label, gains in (("band_lanes", band_gain), ("W2", w2_gain)):
        print(f"float32, cut {args.cut:g}, where auto runs rle ({len(gains)}), rle at {label} over staged: "
              f"geomean {score46.geomean(gains):.3f}, worst {min(gains, default=float('nan')):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
