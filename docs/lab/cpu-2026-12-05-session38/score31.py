"""Scores P5 (this folder's README) from the device call's set 31 record: staged (P5's pick) over
segmented (the old pick) by device time, float32.

    PYTHONPATH=. python3 score31.py ../h100-2026-12-05-session38/held-out-31-p5.json.gz
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts"))
import fit_auto  # noqa: E402

CONTROLS = ("hot-columns-24-over-4M", "kron-500x6000", "rows-40-80-window-60k")
LONG = ("rows-48-80-over-800k", "rows-64-128-over-3M", "rows-1-200-over-4M", "rows-100-140-over-2M")


def main(paths) -> int:
    ratio, lean = {}, {}
    for path in paths:
        for r in fit_auto.read_records(path):
            t = {row["kernel"]: row["device_us"] for row in r["rows"] if "device_us" in row}
            name = Path(r["name"]).stem
            ratio[name] = t["segmented"] / t["staged"]
            lean[name] = min(t[k] for k in fit_auto.ANCHORS if k in t) / t["staged"]
    a = {k: v for k, v in ratio.items() if k not in CONTROLS}
    geo = math.exp(sum(map(math.log, a.values())) / len(a))
    first = sum(v >= 1 for v in a.values()) >= 6 and geo >= 1.03 and min(a.values()) >= 0.97
    print(f"P5a: {sum(v >= 1 for v in a.values())}/{len(a)} at least as fast, geomean {geo:.3f}, lowest "
          f"{min(a.values()):.3f} (predicted >= 6/7, >= 1.03, none below 0.97): {'held' if first else 'failed'}")
    long_ok = all(a[k] >= 1.05 for k in LONG)
    print(f"P5a's long rows (each >= 1.05): {'held' if long_ok else 'failed'}")
    for k in sorted(a):
        print(f"  {k:28s} staged/segmented {a[k]:.3f}  staged over the lean call {lean[k]:.2f}")
    b = {k: ratio[k] for k in CONTROLS}
    held = sum(v <= 1 for v in b.values()) >= 2
    print(f"P5b: segmented at least as fast on {sum(v <= 1 for v in b.values())}/3 (predicted >= 2): "
          f"{'held' if held else 'failed'}")
    for k in CONTROLS:
        print(f"  {k:28s} staged/segmented {b[k]:.3f}")
    print(f"decision (P5a's first clause and P5b): {'taken' if first and held else 'not taken'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
