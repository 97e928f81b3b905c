"""Score B3 (written in ../cpu-2026-12-05-session39/README.md before the run): b4s4m8 over the committed
adaptive2 by device time, on set 35 (B3a) and on the larger corpus and real matrices (B3b); b8 and s8
beside it for the record.

    python3 score35.py batch35 > score35.txt
"""

from __future__ import annotations

import gzip
import json
import math
import sys
from pathlib import Path

# part: (no run below, geomean at least)
BOUNDS = {"small": (0.95, 1.02), "large": (0.97, 1.00)}


def ratios(results: list[dict], variant: str) -> list[tuple[float, str, str]]:
    """(committed time over the variant's, matrix, dtype) for every run of the variant."""
    base = {(r["source"], r["dtype"]): r["ms"] for r in results if r["variant"] == "committed"}
    out = []
    for r in results:
        if r["variant"] == variant:
            if r["status"] != "ok":
                raise SystemExit(f"{variant} failed its check on {r['source']} {r['dtype']}")
            out.append((base[r["source"], r["dtype"]] / r["ms"], r["source"].split("/")[-1], r["dtype"]))
    return sorted(out)


def main(folder: str) -> None:
    for part, (lowest, least) in BOUNDS.items():
        results = json.load(gzip.open(Path(folder) / f"ab-{part}.json.gz"))["results"]
        for variant in ("b4s4m8", "b8", "s8"):
            runs = ratios(results, variant)
            geomean = math.exp(sum(math.log(r) for r, _, _ in runs) / len(runs))
            low = runs[0]
            line = f"{part:5} {variant:7} n={len(runs)} geomean {geomean:.3f} lowest {low[0]:.3f} ({low[1]} {low[2]})"
            if variant == "b4s4m8":
                held = geomean >= least and low[0] >= lowest
                line += f"  -> {'HELD' if held else 'FAILED'} (geomean >= {least}, none < {lowest})"
            print(line)
            if variant == "b4s4m8":
                print("\n".join(f"      {r:.3f} {name} {dtype}" for r, name, dtype in runs))


if __name__ == "__main__":
    main(sys.argv[1])
