"""float32 rle widths timed at 2-16 lanes (time_turns.py runs): each matrix's best width beside band_lanes'.

    PYTHONPATH=. python3 docs/lab/h100-2026-12-06-session48/widths32.py TURNS.json ... --runs RUNS.json ...
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "h200-2026-12-06-session46"))
import score46  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("turns", type=Path, nargs="+")
    parser.add_argument("--runs", type=Path, nargs="+", required=True)
    parser.add_argument("--dtype", default="float32")
    args = parser.parse_args(argv)
    ms, stats = score46.load(args.turns, args.runs)
    size = np.dtype(args.dtype).itemsize
    for (name, d), t in sorted(ms.items(), key=lambda kv: stats[kv[0][0]]["mean_row"]):
        if d != args.dtype:
            continue
        s = stats[name]
        band = min(score46.band_lanes(s["mean_row"], size), 16)
        widths = {w: t[f"rle:{w}"] for w in (2, 4, 8, 16) if f"rle:{w}" in t}
        best = min(widths, key=widths.get)
        print(f"{name:32s} row {s['mean_row']:6.1f} run {s['mean_run']:5.1f} band {band:2d} best {best:2d} "
              f"band/best {widths[best] / widths[band]:.3f} staged/rle-best {t['staged'] / widths[best]:.3f} "
              + " ".join(f"{w}:{widths[best] / v:.2f}" for w, v in widths.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
