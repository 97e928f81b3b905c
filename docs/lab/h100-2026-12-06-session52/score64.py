"""Set 64 (call 2): per matrix and dtype, auto's kernel (the timed kernel whose time auto's matches), auto over the
lean cuSPARSE pair, the fastest spla kernel timed over auto, and blocked over staged; beside the model's
predicted gain (gain64.txt).

    python3 score64.py TURNS.json gain64.txt
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

SPLA = ("blocked", "staged", "segmented")


def main(turns: str, gains: str) -> None:
    predicted = {(f[0], f[1]): float(f[-1]) for f in (line.split() for line in open(gains))}
    times: dict = {}
    for r in json.loads(Path(turns).read_text())["results"]:
        if r["status"] == "ok":
            times.setdefault((r["dtype"], Path(r["source"]).stem), {})[r["kernel"]] = r["ms"]
    for dtype in ("float32", "float64"):
        print(f"{dtype}: matrix, auto runs, lean / auto, best spla / auto, blocked over staged, "
              f"predicted")
        leans = []
        for (d, name), t in sorted(times.items()):
            if d != dtype:
                continue
            auto = min(SPLA, key=lambda k: abs(t[k] - t["auto"]))
            lean = min(t["cusparse"], t["cusparse:2"]) / t["auto"]
            leans.append(lean)
            print(f"  {name:<30} {auto:<8} {lean:6.3f} {min(t[k] for k in SPLA) / t['auto']:6.3f} "
                  f"{t['staged'] / t['blocked']:6.2f} {predicted.get((name, dtype), math.nan):6.2f}")
        print(f"  geomean lean / auto {math.exp(sum(map(math.log, leans)) / len(leans)):.3f} over {len(leans)}")


if __name__ == "__main__":
    main(*sys.argv[1:])
