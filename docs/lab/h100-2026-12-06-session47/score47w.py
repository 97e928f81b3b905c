"""W1 of this folder's README: rle's width from a row's entries (the width nearest, in log2, to the mean row over
ENTRIES_A_LANE, in both dtypes) against band_lanes, from time_turns.py runs that timed staged, rle at 2-16 lanes and
both cuSPARSE algorithms. Per dtype, over the matrices where the two rules differ: rle time at band_lanes over rle
time at W1's width. With --cut, also score46.py's D3 figures under W1.

    PYTHONPATH=. python3 docs/lab/h100-2026-12-06-session47/score47w.py TURNS.json ... --runs RUNS.json ... \\
        [--cut float32=16,float64=16]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "h200-2026-12-06-session46"))
import score46  # noqa: E402

ENTRIES_A_LANE = 10
WIDTHS = (2, 4, 8, 16)  # the widths the turns time


def w1(mean_row: float, itemsize: int) -> int:
    want = max(mean_row / ENTRIES_A_LANE, 1.0)
    return min(WIDTHS, key=lambda w: abs(np.log2(w) - np.log2(want)))


score46.WIDTHS["w1"] = w1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("turns", type=Path, nargs="+")
    parser.add_argument("--runs", type=Path, nargs="+", required=True)
    parser.add_argument("--cut")
    args = parser.parse_args(argv)
    ms, stats = score46.load(args.turns, args.runs)
    for dtype in sorted({d for _, d in ms}):
        size = np.dtype(dtype).itemsize
        moved = []
        for (name, d), t in sorted(ms.items()):
            row = stats[name]["mean_row"]
            band, mine = score46.band_lanes(row, size), w1(row, size)
            if d == dtype and band != mine:
                moved.append(t[f"rle:{min(band, 16)}"] / t[f"rle:{mine}"])
                print(f"  {dtype} {name}: band {band}, W1 {mine}: {moved[-1]:.3f}")
        print(f"{dtype}: W1 over band_lanes where they differ ({len(moved)}): geomean {score46.geomean(moved):.3f}, "
              f"worst {min(moved, default=float('nan')):.3f}")
    if args.cut:
        return score46.main([str(p) for p in args.turns] + ["--runs", *map(str, args.runs), "--cut", args.cut,
                                                             "--width", "w1"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
