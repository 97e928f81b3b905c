"""M2 on sets 49 and 50 (this folder's README), from time_turns.py's run: for each matrix and dtype, what auto ran
(the code's rule when timed) and what a trial rule picks, each over the best kernel timed, with the rule's inputs
(zone_stats.json, CPU). The trial: float32 medium-class matrices whose near share is under NEAR run staged.

    PYTHONPATH=. python3 docs/lab/h100-2026-12-06-session49/score_zone.py --stats zone_stats.json --turns T.json \\
        [--near 0.8]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

KERNELS = ("vector", "staged", "segmented", "warp")


def geomean(values) -> float:
    return float(np.exp(np.mean(np.log(values)))) if len(values) else float("nan")


def trial_kernel(s: dict, near_cut: float) -> str:
    if s["class"] == "medium" and s["x_bytes"] / s["rows"] == 4 and s["near"] < near_cut:
        return "staged"
    return s["kernel"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stats", type=Path, required=True)
    parser.add_argument("--turns", type=Path, required=True)
    parser.add_argument("--near", type=float, default=None, help="the trial's near-share cut (none: no trial)")
    args = parser.parse_args(argv)
    stats = json.loads(args.stats.read_text())
    times: dict = {}
    for r in json.loads(args.turns.read_text())["results"]:
        if r["status"] == "ok":
            times.setdefault(f"{Path(r['source']).stem}/{r['dtype']}", {})[r["kernel"]] = r["ms"]
    code, trial, moved = [], [], []
    for key, t in sorted(times.items()):
        s = stats[key]
        best = min((k for k in t if k in KERNELS), key=t.get)
        lean = min(t["cusparse"], t["cusparse:2"])
        line = (f"  {key:26s} near {s['near']:.2f} x {s['x_bytes'] / 2**20:4.2f} MiB {s['class']:16s} "
                f"auto {s['kernel']:9s} {t[best] / t['auto']:.3f} of best ({best}); "
                + " ".join(f"{k} {t[best] / t[k]:.2f}" for k in KERNELS) + f"; auto over lean {lean / t['auto']:.2f}")
        code.append(t[best] / t["auto"])
        if args.near is not None:
            pick = trial_kernel(s, args.near)
            trial.append(t[best] / t[pick])
            if pick != s["kernel"]:
                moved.append((key, t[pick] and t["auto"] / t[pick]))
                line += f"  TRIAL -> {pick} {t[best] / t[pick]:.3f}"
        print(line)
    print(f"code: auto over the best, geomean {geomean(code):.3f}, worst {min(code):.3f}, "
          f"within 15% {sum(q >= 1 / 1.15 for q in code)}/{len(code)}")
    if args.near is not None:
        print(f"trial near < {args.near}: geomean {geomean(trial):.3f}, worst {min(trial):.3f}, "
              f"within 15% {sum(q >= 1 / 1.15 for q in trial)}/{len(trial)}; moved {len(moved)}: "
              + ", ".join(f"{k} {g:.3f}" for k, g in moved))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
