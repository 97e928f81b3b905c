"""Band's rotation on set 46 (this folder's README): from ab_kernel.py runs of the working tree's band (rotated
entry where spla.planning.banks.rotates says) against spmv_band_plain_entries.cu (plain loads in both entries),
float32: the baseline's device time over the tree's, per matrix, split by whether the rule rotates there
(piles_46.json, computed on the CPU before the run), and each variant over ab_kernel's cuSPARSE anchor.

    PYTHONPATH=. python3 docs/lab/h100-2026-12-06-session49/score46.py --piles PILES.json --ab AB.json ...
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import numpy as np

from spla.planning.banks import ROTATE_LANES
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
        fixed = re.match(r"band(?::(\d+))?$", data["kernel"]).group(1)
        times: dict = {}
        for r in data["results"]:
            if r["dtype"] != "float32":
                continue
            if r["status"] != "ok":
                print(f"  {r['source']} {r['variant']}: {r['status']}")
                continue
            row = times.setdefault(Path(r["source"]).stem, {})
            row[r["variant"]], row["cusparse"] = r["ms"], r["cusparse_ms"]
        split: dict = {True: [], False: []}
        anchor: dict = {"committed": [], "plain": []}
        for name, t in sorted(times.items()):
            lanes = int(fixed) if fixed else band_lanes(piles[name]["mean_row"], 4)
            on = lanes in ROTATE_LANES and piles[name][f"pile{lanes}"] >= (32 // lanes) / 2
            gain = t["plain"] / t["committed"]
            split[on].append(gain)
            for k in anchor:
                anchor[k].append(t["cusparse"] / t[k])
            over = f"  over cuSPARSE: tree {t['cusparse'] / t['committed']:.3f}, plain {t['cusparse'] / t['plain']:.3f}"
            print(f"  {data['kernel']:6s} {name:22s} lanes {lanes:2d} {'rotates' if on else 'keeps  '}"
                  f" {gain:.3f}{over}")
        for on, label in ((True, "rotates"), (False, "keeps")):
            gains = split[on]
            print(f"{data['kernel']} float32, where the rule {label} ({len(gains)}): geomean {geomean(gains):.3f}, "
                  f"worst {min(gains, default=float('nan')):.3f}")
        for k, v in anchor.items():
            print(f"{data['kernel']} float32, {k} over ab_kernel's cuSPARSE: geomean {geomean(v):.3f}, "
                      f"worst {min(v):.3f}")
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
