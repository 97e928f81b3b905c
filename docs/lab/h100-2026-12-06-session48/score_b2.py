"""B1 and B2 of this folder's README: from time_turns.py on set 42 (rle:2 time over rle:4, float32) and from
ab_kernel.py's committed-against-rotate runs (committed time over rotate's, per matrix, dtype and width), with the
rows that start on one L1 bank marked (rows of one length whose values are a whole number of 128-byte lines).

    PYTHONPATH=. python3 docs/lab/h100-2026-12-06-session48/score_b2.py --turns TURNS.json --ab AB.json ...
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import numpy as np


def geomean(values) -> float:
    return float(np.exp(np.mean(np.log(values)))) if len(values) else float("nan")


def one_bank(name: str, dtype: str) -> bool:
    """Rows of exactly L entries (set 42's exact-L, set 41's rows of 32) whose values fill whole lines."""
    found = re.match(r"exact-(\d+)-", name)
    length = int(found.group(1)) if found else (32 if name.startswith(("aligned-runs-2x16", "sliding-2x16")) else 0)
    return length > 0 and (length * np.dtype(dtype).itemsize) % 128 == 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=Path)
    parser.add_argument("--ab", type=Path, nargs="+", default=[])
    args = parser.parse_args(argv)
    if args.turns:
        print("B1, float32, rle:2 time over rle:4 (above 1: 4 lanes faster), staged over the better of the two:")
        ms: dict = {}
        for r in json.loads(args.turns.read_text())["results"]:
            if r["status"] == "ok":
                ms.setdefault(Path(r["source"]).stem, {})[r["kernel"]] = r["ms"]
        for name, t in sorted(ms.items(), key=lambda kv: int(re.match(r"exact-(\d+)", kv[0]).group(1))):
            print(f"  {name:22s} {t['rle:2'] / t['rle:4']:.3f}   rle:8 over rle:4 {t['rle:8'] / t['rle:4']:.3f}   "
                  f"staged / best rle {t['staged'] / min(t['rle:2'], t['rle:4'], t['rle:8']):.3f}")
    for path in args.ab:
        data = json.loads(path.read_text())
        times: dict = {}
        for r in data["results"]:
            if r["status"] == "ok":
                times.setdefault((Path(r["source"]).stem, r["dtype"]), {})[r["variant"]] = r["ms"]
        print(f"\nB2, {data['kernel']}: committed time over rotate's (above 1: rotate faster)")
        bank, rest = [], []
        for (name, dtype), t in sorted(times.items()):
            gain = t["committed"] / t["rotate"]
            (bank if one_bank(name, dtype) else rest).append(gain)
            print(f"  {name:32s} {dtype}  {gain:.3f}{'  one bank' if one_bank(name, dtype) else ''}")
        worst = min(bank, default=float("nan"))
        print(f"  one-bank rows ({len(bank)}): geomean {geomean(bank):.3f}, worst {worst:.3f}")
        print(f"  the rest ({len(rest)}): geomean {geomean(rest):.3f}, worst {min(rest, default=float('nan')):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
