"""Band's rotation on set 46 (this folder's README), from ab_kernel.py runs: one variant's device time over
another's, per matrix, split by whether the rule rotates there at band's width in that dtype (piles_46.json,
computed on the CPU before the run), and each variant over ab_kernel's cuSPARSE anchor. R1: the tree (rotated
entry where spla.planning.banks.rotates says) over spmv_band_plain_entries.cu (plain loads in both entries), float32;
R2: spmv_band_rotate_all.cu (rotated loads in both entries) over the tree, float64 (`--variant rotall --over
committed --dtype float64`).

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
    parser.add_argument("--variant", default="committed", help="the variant scored (default: the tree)")
    parser.add_argument("--over", default="plain", help="the variant it is scored against")
    parser.add_argument("--dtype", default="float32", choices=("float32", "float64"))
    args = parser.parse_args(argv)
    itemsize, suffix = (4, "") if args.dtype == "float32" else (8, "_64")
    piles = json.loads(args.piles.read_text())
    for path in args.ab:
        data = json.loads(path.read_text())
        fixed = re.match(r"band(?::(\d+))?$", data["kernel"]).group(1)
        times: dict = {}
        for r in data["results"]:
            if r["dtype"] != args.dtype:
                continue
            if r["status"] != "ok":
                print(f"  {r['source']} {r['variant']}: {r['status']}")
                continue
            row = times.setdefault(Path(r["source"]).stem, {})
            row[r["variant"]], row["cusparse"] = r["ms"], r["cusparse_ms"]
        split: dict = {True: [], False: []}
        anchor: dict = {args.variant: [], args.over: []}
        for name, t in sorted(times.items()):
            lanes = int(fixed) if fixed else band_lanes(piles[name]["mean_row"], itemsize)
            on = lanes in ROTATE_LANES and piles[name][f"pile{lanes}{suffix}"] >= (32 // lanes) / 2
            gain = t[args.over] / t[args.variant]
            split[on].append(gain)
            for k in anchor:
                anchor[k].append(t["cusparse"] / t[k])
            over = "  over cuSPARSE: " + ", ".join(f"{k} {t['cusparse'] / t[k]:.3f}" for k in anchor)
            print(f"  {data['kernel']:6s} {name:22s} lanes {lanes:2d} {'rotates' if on else 'keeps  '}"
                  f" {gain:.3f}{over}")
        for on, label in ((True, "rotates"), (False, "keeps")):
            gains = split[on]
            print(f"{data['kernel']} {args.dtype}, where the rule {label} ({len(gains)}): "
                  f"geomean {geomean(gains):.3f}, worst {min(gains, default=float('nan')):.3f}")
        for k, v in anchor.items():
            print(f"{data['kernel']} {args.dtype}, {k} over ab_kernel's cuSPARSE: geomean {geomean(v):.3f}, "
                      f"worst {min(v):.3f}")
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
