"""Set 53 with every spla kernel (call 5): auto's time over the best spla kernel's (the issue's "untuned
first-call choice within 15%"), per matrix and dtype, and auto over the lean cuSPARSE pair in the same run.

    python3 score53_kernels.py TURNS.json
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path


def main(turns: str) -> None:
    times: dict = {}
    for r in json.loads(Path(turns).read_text())["results"]:
        if r["status"] == "ok":
            times.setdefault((Path(r["source"]).stem, r["dtype"]), {})[r["kernel"]] = r["ms"]
    for dtype in ("float32", "float64"):
        shares, leans = [], []
        print(f"{dtype}: matrix, best spla kernel, best / auto, lean pair / auto")
        for (name, dt), t in sorted(times.items()):
            if dt != dtype:
                continue
            spla_times = {k: v for k, v in t.items() if not k.startswith("cusparse") and k != "auto"}
            best = min(spla_times, key=spla_times.get)
            shares.append(min(spla_times[best], t["auto"]) / t["auto"])
            leans.append(min(t["cusparse"], t["cusparse:2"]) / t["auto"])
            flag = "  <- behind 15%" if shares[-1] < 0.85 else ""
            print(f"  {name:<24} {best:<10} {shares[-1]:6.3f} {leans[-1]:6.3f}{flag}")
        within = sum(s >= 0.85 for s in shares)
        print(f"  within 15%: {within}/{len(shares)}, best / auto geomean "
              f"{math.exp(sum(map(math.log, shares)) / len(shares)):.3f}, worst {min(shares):.3f}; "
              f"auto over the lean pair {math.exp(sum(map(math.log, leans)) / len(leans)):.3f}")


if __name__ == "__main__":
    main(*sys.argv[1:])
