"""B4's and B5's outcomes on sets 44 and 45 (this folder's README): from ab_kernel.py runs of the working tree's rle
(which rotates where spla.planning.rle.rotates says) against a baseline variant that never rotates
(spmv_rle_inorder.cu for B4, spmv_rle_plain_entries.cu for B5), float32: the baseline's time over the tree's, per
matrix, split by whether the rule rotates there (piles_44.json / piles_45.json, computed on the CPU before the run).

    PYTHONPATH=. python3 docs/lab/h100-2026-12-06-session48/score44.py --piles PILES.json --ab AB.json ...
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import numpy as np

from spla.planning.spmv import band_lanes


def geomean(values) -> float:
    return float(np.exp(np.mean(np.log(values)))) if len(values) else float("nan")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--piles", type=Path, required=True)
    parser.add_argument("--ab", type=Path, nargs="+", required=True)
    args = parser.parse_args(argv)
    piles = json.loads(args.piles.read_text())
    for path in args.ab:
        data = json.loads(path.read_text())
        fixed = re.match(r"rle(?::(\d+))?$", data["kernel"]).group(1)
        times: dict = {}
        for r in data["results"]:
            if r["dtype"] == "float32":
                if r["status"] != "ok":
                    print(f"  {r['source']} {r['variant']}: {r['status']}")
                    continue
                times.setdefault(Path(r["source"]).stem, {})[r["variant"]] = r["ms"]
        split: dict = {True: [], False: []}
        for name, t in sorted(times.items()):
            lanes = int(fixed) if fixed else band_lanes(piles[name]["mean_row"], 4)
            on = lanes in (2, 4, 8) and piles[name][f"pile{lanes}"] >= (32 // lanes) / 2
            gain = next(v for k, v in t.items() if k != "committed") / t["committed"]
            split[on].append(gain)
            print(f"  {data['kernel']:6s} {name:30s} lanes {lanes:2d} {'rotates' if on else 'keeps  '} {gain:.3f}")
        for on, label in ((True, "rotates"), (False, "keeps")):
            gains = split[on]
            print(f"{data['kernel']} float32, where the rule {label} ({len(gains)}): geomean {geomean(gains):.3f}, "
                  f"worst {min(gains, default=float('nan')):.3f}")
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
