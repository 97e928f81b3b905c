"""Scores rle against staged from time_turns.py runs (staged, rle and both cuSPARSE algorithms in
turns) beside each matrix's runs (run_stats.py), and reads auto's cut off them by R5's rule: the
shortest mean run from which every matrix keeps rle at --floor x staged or better, with a geomean
of at least --geomean, in both dtypes. With --cut, scores that cut instead (set 38's test): auto
runs rle from it and staged below, against staged on all.

    PYTHONPATH=. python3 docs/lab/h200-2026-12-06-session45/score45.py TURNS.json ... \\
        --runs run_stats_fit.json [--cut 6.5]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np

from spla.planning.spmv import band_lanes


def geomean(values) -> float:
    return float(np.exp(np.mean(np.log(values)))) if len(values) else float("nan")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("turns", type=Path, nargs="+")
    parser.add_argument("--runs", type=Path, nargs="+", required=True, help="run_stats.py's JSON files")
    parser.add_argument("--floor", type=float, default=0.98)
    parser.add_argument("--geomean", type=float, default=1.03)
    parser.add_argument("--cut", type=float, help="score this cut, not find one")
    parser.add_argument("--lanes", choices=["rule", "best"], default="rule",
                        help="where the turns time rle:2/4/8: rle at band_lanes's width (auto's) or the best of them")
    args = parser.parse_args(argv)
    runs = {name: s for path in args.runs for name, s in json.loads(path.read_text()).items()}
    ms: dict = defaultdict(dict)
    for path in args.turns:
        for r in json.loads(path.read_text())["results"]:
            if r["status"] == "ok":
                ms[Path(r["source"]).stem, r["dtype"]][r["kernel"]] = r["ms"]
    rows = []  # (mean run, name, dtype, rle / staged, staged / lean, rle / lean)
    for (name, dtype), t in ms.items():
        lean = min(t["cusparse"], t["cusparse:2"])
        if "rle" not in t:
            widths = [k for k in t if k.startswith("rle:")]
            rule = f"rle:{band_lanes(runs[name]['mean_row'], np.dtype(dtype).itemsize)}"
            t["rle"] = min(t[k] for k in widths) if args.lanes == "best" else t[rule]
        rows.append((runs[name]["mean_run"], name, dtype, t["staged"] / t["rle"], lean / t["staged"], lean / t["rle"]))
    rows.sort()
    print("| matrix | mean run | runs a row | dtype | rle / staged | staged / lean | rle / lean |")
    print("| --- | ---: | ---: | --- | ---: | ---: | ---: |")
    for run, name, dtype, gain, staged, rle in rows:
        print(f"| {name} | {run:.2f} | {runs[name]['runs_a_row']:.2f} | {dtype} | {gain:.3f} | {staged:.3f} "
              f"| {rle:.3f} |")
    dtypes = sorted({r[2] for r in rows})
    if args.cut is not None:
        for dtype in dtypes:
            mine = [r for r in rows if r[2] == dtype]
            chosen = [r for r in mine if r[0] >= args.cut]
            auto_over_staged = [r[3] if r[0] >= args.cut else 1.0 for r in mine]
            print(f"\n{dtype}, cut {args.cut:g}: rle on {len(chosen)} of {len(mine)}, rle / staged there "
                  f"{min((r[3] for r in chosen), default=float('nan')):.3f} worst, geomean "
                  f"{geomean([r[3] for r in chosen]):.3f}; auto / staged over the set {geomean(auto_over_staged):.3f}; "
                  f"auto / lean {geomean([r[5] if r[0] >= args.cut else r[4] for r in mine]):.3f} "
                  f"(staged on all: {geomean([r[4] for r in mine]):.3f})")
        return 0
    for cut in sorted({r[0] for r in rows}):
        held = [r for r in rows if r[0] >= cut]
        if all(min(r[3] for r in held if r[2] == d) >= args.floor and geomean([r[3] for r in held if r[2] == d])
               >= args.geomean for d in dtypes):
            print(f"\ncut: from mean run {cut:g} ({len(held) // len(dtypes)} matrices from it hold "
                  f"{args.floor:g}x each and {args.geomean:g}x geomean in both dtypes)")
            return 0
    print("\nno cut holds: rle leaves auto")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
