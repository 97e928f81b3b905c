"""B4 of this folder's README: float32 rle rotates its value loads where a warp's first load piles at least half
its rows on one L1 bank (spla.planning.rle.bank_pile, at 2, 4 or 8 lanes), else runs the committed loads. Its time
on each matrix is rotate's where the rule rotates and committed's where it does not, from ab_kernel.py runs of
committed against a float32 rotation (rotate32, or B2's rotate, which is the same code in float32).

    PYTHONPATH=. python3 docs/lab/h100-2026-12-06-session48/score_b4.py --piles PILES.json ... --ab AB.json ...
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import numpy as np

from spla.planning.spmv import band_lanes

ROTATING = (2, 4, 8)


def geomean(values) -> float:
    return float(np.exp(np.mean(np.log(values)))) if len(values) else float("nan")


def rotates(pile: dict, lanes: int) -> bool:
    return lanes in ROTATING and pile[f"pile{lanes}"] >= (32 // lanes) / 2


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--piles", type=Path, nargs="+", required=True)
    parser.add_argument("--ab", type=Path, nargs="+", required=True)
    args = parser.parse_args(argv)
    piles = {k: v for p in args.piles for k, v in json.loads(p.read_text()).items()}
    for path in args.ab:
        data = json.loads(path.read_text())
        found = re.match(r"rle(?::(\d+))?$", data["kernel"])
        times: dict = {}
        for r in data["results"]:
            if r["status"] == "ok" and r["dtype"] == "float32":
                times.setdefault(Path(r["source"]).stem, {})[r["variant"]] = r["ms"]
        gains, fired = [], []
        for name, t in sorted(times.items()):
            lanes = int(found.group(1)) if found.group(1) else band_lanes(piles[name]["mean_row"], 4)
            other = next(v for k, v in t.items() if k != "committed")
            on = rotates(piles[name], lanes)
            gains.append(t["committed"] / other if on else 1.0)
            if on:
                fired.append(gains[-1])
            pile = piles[name][f"pile{lanes}"] if lanes in ROTATING else "-"
            print(f"  {data['kernel']:6s} {name:30s} lanes {lanes:2d} pile {pile}"
                  f" {'rotates' if on else 'keeps  '} B4 over committed {gains[-1]:.3f}"
                  f" (rotation would be {t['committed'] / other:.3f})")
        worst = min(fired, default=float("nan"))
        print(f"{data['kernel']} float32: B4 over committed geomean {geomean(gains):.3f}, worst {min(gains):.3f}; "
              f"where it rotates ({len(fired)}): geomean {geomean(fired):.3f}, worst {worst:.3f}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
