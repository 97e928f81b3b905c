"""M1 on probe set 48 (this folder's README), from time_turns.py's run: each kernel's time a nonzero on rows of
exactly k entries that start on one L1 bank (16, 32, 64) over the same on rows beside them that do not (17; the mean
of 31 and 33; 65), local and scattered, in both dtypes; and auto's pick over the best kernel timed.

    PYTHONPATH=. python3 docs/lab/h100-2026-12-06-session49/score48.py TURNS.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

PAIRS = {16: (17,), 32: (31, 33), 64: (65,)}
KERNELS = ("vector:2", "vector:4", "vector:8", "warp:2", "warp:4", "staged", "cusparse")


def main(argv) -> int:
    per_nnz: dict = {}
    auto: dict = {}
    for r in json.loads(Path(argv[0]).read_text())["results"]:
        if r["status"] == "ok":
            per_nnz.setdefault((Path(r["source"]).stem, r["dtype"]), {})[r["kernel"]] = r["ms"] / r["nnz"]
    print("time a nonzero, rows that pile over rows beside them: " + "  ".join(f"{k:>8s}" for k in KERNELS))
    for dtype in ("float32", "float64"):
        for where in ("local", "scattered"):
            for k, beside in PAIRS.items():
                t = per_nnz[(f"knn-{k}-{where}", dtype)]
                others = [per_nnz[(f"knn-{b}-{where}", dtype)] for b in beside]
                ratios = [t[n] / (sum(o[n] for o in others) / len(others)) for n in KERNELS]
                print(f"  {dtype} {where:9s} {k:2d} over {'/'.join(map(str, beside)):5s}: "
                      + "  ".join(f"{x:8.3f}" for x in ratios))
    print("auto over the best kernel timed (time ratio best/auto):")
    for (name, dtype), t in sorted(per_nnz.items()):
        best = min(t, key=t.get)
        auto[(name, dtype)] = t[best] / t["auto"]
        print(f"  {name:16s} {dtype}: {auto[(name, dtype)]:.3f} (best {best})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
