"""Set 59 (call 3): per matrix and dtype, auto's kernel, auto over the lean cuSPARSE pair, the best timed spla
kernel over auto, and blocked over staged and vector.

    python3 score59.py TURNS.json
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

SPLA = ("blocked", "staged", "vector", "segmented", "adaptive2")


def main(turns: str) -> None:
    times: dict = {}
    for r in json.loads(Path(turns).read_text())["results"]:
        if r["status"] == "ok":
            times.setdefault((r["dtype"], Path(r["source"]).stem), {})[r["kernel"]] = r["ms"]
    for dtype in ("float32", "float64"):
        print(f"{dtype}: matrix, auto runs, lean / auto, best spla / auto, blocked over staged, over vector")
        leans = []
        for (d, name), t in sorted(times.items()):
            if d != dtype:
                continue
            auto = min(SPLA, key=lambda k: abs(t[k] - t["auto"]))  # the kernel whose time auto's matches
            lean = min(t["cusparse"], t["cusparse:2"]) / t["auto"]
            best = min(t[k] for k in SPLA) / t["auto"]
            leans.append(lean)
            print(f"  {name:<30} {auto:<10} {lean:6.3f} {best:6.3f} {t['staged'] / t['blocked']:6.2f} "
                  f"{t['vector'] / t['blocked']:6.2f}")
        print(f"  geomean lean / auto {math.exp(sum(map(math.log, leans)) / len(leans)):.3f} over {len(leans)}")


if __name__ == "__main__":
    main(*sys.argv[1:])
