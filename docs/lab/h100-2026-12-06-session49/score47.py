"""W3 on set 47 (this folder's README), from time_turns.py's run of rle (the tree's width), rle:2, rle:4, staged and
cuSPARSE ALG1/ALG2, float32: where W3's width (stats_47.json's w3_lanes, computed on the CPU before the run)
differs from band_lanes, the time at band's width over the time at W3's; where auto runs rle (mean run at least
rle.AUTO_MIN_RUN), the tree's rle over staged and over the lean cuSPARSE pair.

    PYTHONPATH=. python3 docs/lab/h100-2026-12-06-session49/score47.py --stats stats_47.json --turns TURNS.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from spla.planning import rle


def geomean(values) -> float:
    return float(np.exp(np.mean(np.log(values)))) if len(values) else float("nan")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stats", type=Path, required=True)
    parser.add_argument("--turns", type=Path, required=True)
    args = parser.parse_args(argv)
    stats = json.loads(args.stats.read_text())
    times: dict = {}
    for r in json.loads(args.turns.read_text())["results"]:
        if r["status"] == "ok":
            times.setdefault(Path(r["source"]).stem, {})[r["kernel"]] = r["ms"]
    differ, agree, auto_staged, auto_lean = [], [], [], []
    for name, t in sorted(times.items()):
        s = stats[name]
        old, new = t[f"rle:{s['band_lanes']}"], t[f"rle:{s['w3_lanes']}"]
        gain = old / new
        (differ if s["w3_lanes"] != s["band_lanes"] else agree).append(gain)
        line = (f"  {name:26s} mean {s['mean_row']:5.1f} run {s['mean_run']:5.1f} repeat {s['repeat']:.2f} "
                f"lanes {s['band_lanes']}->{s['w3_lanes']}  W3 {gain:.3f}  plan/rle:{s['w3_lanes']} "
                f"{t['rle'] / new:.3f}  rle:2/rle:4 {t['rle:2'] / t['rle:4']:.3f}")
        if s["mean_run"] >= rle.AUTO_MIN_RUN:
            lean = min(t["cusparse"], t["cusparse:2"])
            auto_staged.append(t["staged"] / t["rle"])
            auto_lean.append(lean / t["rle"])
            line += f"  auto's rle over staged {auto_staged[-1]:.3f}, over lean cuSPARSE {auto_lean[-1]:.3f}"
        print(line)
    print(f"W3 over band_lanes where they differ ({len(differ)}): geomean {geomean(differ):.3f}, "
          f"worst {min(differ, default=float('nan')):.3f}")
    print(f"where they agree ({len(agree)}): the same width (rle:2/rle:4 above for information)")
    print(f"where auto runs rle ({len(auto_staged)}): rle over staged geomean {geomean(auto_staged):.3f}, worst "
          f"{min(auto_staged, default=float('nan')):.3f}; over the lean cuSPARSE pair {geomean(auto_lean):.3f}, "
          f"worst {min(auto_lean, default=float('nan')):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
