"""Sets 54-55 (call 6): each kernel's time over the best timed spla kernel's, per matrix and dtype, with the rows,
row length and x size, and auto over the lean cuSPARSE pair.

    python3 score_wide.py TURNS.json
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

KERNELS = ("auto", "vector", "warp:32", "staged", "adaptive2", "segmented")


def main(turns: str) -> None:
    times: dict = {}
    for r in json.loads(Path(turns).read_text())["results"]:
        if r["status"] == "ok":
            times.setdefault((Path(r["source"]).stem, r["dtype"]), {})[r["kernel"]] = r["ms"]
    print("best / kernel (1 = the best spla kernel); lean = the lean cuSPARSE pair over auto")
    print(f"{'matrix':<24} {'dtype':<8} {'x MB':>6} " + " ".join(f"{k:>9}" for k in KERNELS) + "   lean")
    for (name, dtype), t in sorted(times.items(), key=lambda kv: (int(re.search(r"-(\d+)x", kv[0][0]).group(1)),
                                                                  kv[0])):
        cols = float(re.search(r"over-([\d.]+)M", name).group(1)) * 1e6
        x_mb = cols * (4 if dtype == "float32" else 8) / 1e6
        best = min(v for k, v in t.items() if k in KERNELS[1:])
        lean = min(t["cusparse"], t["cusparse:2"]) / t["auto"]
        print(f"{name:<24} {dtype:<8} {x_mb:6.0f} " + " ".join(f"{best / t[k]:9.3f}" for k in KERNELS)
              + f" {lean:6.3f}")


if __name__ == "__main__":
    main(*sys.argv[1:])
