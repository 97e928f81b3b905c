"""D1-D3 of this folder's README, from time_turns.py runs that timed staged, rle at 2-16 lanes and
both cuSPARSE algorithms in turns, beside each matrix's runs (run_stats.py).

D1: rle's width, by rule (band_lanes, a step wider or narrower, fixed 2, 4 or 8), scored per dtype
against band_lanes. D2: auto's cut per dtype with a width rule: the shortest mean run from which
every matrix keeps rle at --floor x staged or better with a geomean of at least --geomean.
With --cut (and --width), scores that rule on a set instead (D3).

    PYTHONPATH=. python3 docs/lab/h200-2026-12-06-session46/score46.py TURNS.json ... --runs RUNS.json ... \\
        [--width band] [--cut float32=12,float64=12]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np

from spla.planning.spmv import band_lanes

WIDTHS = {
    "band": lambda row, size: band_lanes(row, size),
    "wider": lambda row, size: min(2 * band_lanes(row, size), 16),
    "narrower": lambda row, size: max(band_lanes(row, size) // 2, 2),
    "fixed2": lambda row, size: 2,
    "fixed4": lambda row, size: 4,
    "fixed8": lambda row, size: 8,
}


def geomean(values) -> float:
    return float(np.exp(np.mean(np.log(values)))) if len(values) else float("nan")


def load(turns, runs):
    """{(name, dtype): {kernel: ms}} and {name: run stats}."""
    stats = {name: s for path in runs for name, s in json.loads(path.read_text()).items()}
    ms: dict = defaultdict(dict)
    for path in turns:
        for r in json.loads(path.read_text())["results"]:
            if r["status"] == "ok":
                ms[Path(r["source"]).stem, r["dtype"]][r["kernel"]] = r["ms"]
    return ms, stats


def rle_ms(t, stat, dtype, width) -> float:
    return t[f"rle:{min(WIDTHS[width](stat['mean_row'], np.dtype(dtype).itemsize), 16)}"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("turns", type=Path, nargs="+")
    parser.add_argument("--runs", type=Path, nargs="+", required=True)
    parser.add_argument("--floor", type=float, default=0.98)
    parser.add_argument("--geomean", type=float, default=1.03)
    parser.add_argument("--width", default=None, help="score this width rule per dtype (dtype=rule,...) or for both")
    parser.add_argument("--cut", help="score these cuts (dtype=cut,...; 'none': auto keeps staged)")
    args = parser.parse_args(argv)
    ms, stats = load(args.turns, args.runs)
    dtypes = sorted({d for _, d in ms})

    def width_of(dtype):
        if args.width is None or "=" not in args.width:
            return args.width or "band"
        return dict(p.split("=") for p in args.width.split(","))[dtype]

    print("| matrix | mean run | runs a row | mean row | dtype | staged / lean | " +
          " | ".join(f"rle:{w} / staged" for w in (2, 4, 8, 16)) + " | band_lanes |")
    print("| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for (name, dtype), t in sorted(ms.items(), key=lambda kv: (stats[kv[0][0]]["mean_run"], kv[0])):
        s = stats[name]
        lean = min(t["cusparse"], t["cusparse:2"])
        print(f"| {name} | {s['mean_run']:.2f} | {s['runs_a_row']:.2f} | {s['mean_row']:.1f} | {dtype} | "
              f"{lean / t['staged']:.3f} | "
              + " | ".join(f"{t['staged'] / t[f'rle:{w}']:.3f}" if f"rle:{w}" in t else "-" for w in (2, 4, 8, 16))
              + f" | {band_lanes(s['mean_row'], np.dtype(dtype).itemsize)} |")

    if args.cut is None:
        print("\nD1, each width rule against band_lanes (rle time band / rule):")
        for dtype in dtypes:
            keys = [k for k in ms if k[1] == dtype]
            for width in WIDTHS:
                r = [rle_ms(ms[k], stats[k[0]], dtype, "band") / rle_ms(ms[k], stats[k[0]], dtype, width) for k in keys]
                print(f"  {dtype} {width:8s} geomean {geomean(r):.3f} worst {min(r):.3f} ({len(r)} matrices)")
        print("\nD2, the cut per dtype with the width rule", args.width or "band")
        for dtype in dtypes:
            rows = sorted((stats[k[0]]["mean_run"],
                           ms[k]["staged"] / rle_ms(ms[k], stats[k[0]], dtype, width_of(dtype)))
                          for k in ms if k[1] == dtype)
            for cut, _ in rows:
                held = [g for run, g in rows if run >= cut]
                if min(held) >= args.floor and geomean(held) >= args.geomean:
                    print(f"  {dtype}: from mean run {cut:g} ({len(held)} matrices: worst {min(held):.3f}, "
                          f"geomean {geomean(held):.3f})")
                    break
            else:
                print(f"  {dtype}: no cut holds: rle leaves auto")
        return 0

    cuts = dict(p.split("=") for p in args.cut.split(","))
    for dtype in dtypes:
        cut = float("inf") if cuts.get(dtype, "none") == "none" else float(cuts[dtype])
        mine = [(stats[k[0]]["mean_run"], ms[k]) for k in ms if k[1] == dtype]
        gains = [t["staged"] / rle_ms(t, stats[name], dtype, width_of(dtype))
                 for (name, d), t in ms.items() if d == dtype and stats[name]["mean_run"] >= cut]
        over = [t["staged"] / rle_ms(t, stats[name], dtype, width_of(dtype)) if stats[name]["mean_run"] >= cut else 1.0
                for (name, d), t in ms.items() if d == dtype]
        lean = [min(t["cusparse"], t["cusparse:2"]) / (rle_ms(t, stats[name], dtype, width_of(dtype))
                if stats[name]["mean_run"] >= cut else t["staged"]) for (name, d), t in ms.items() if d == dtype]
        print(f"\n{dtype}, cut {cut:g}, width {width_of(dtype)}: rle on {len(gains)} of {len(mine)}, "
              f"rle / staged there "
              f"worst {min(gains, default=float('nan')):.3f}, geomean {geomean(gains):.3f}; auto / staged over the "
              f"set {geomean(over):.3f}; auto / lean {geomean(lean):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
