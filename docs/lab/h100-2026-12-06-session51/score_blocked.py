"""Blocked against staged, vector and auto, and auto against the lean cuSPARSE pair, per matrix and dtype, from a
time_turns.py turns.json (sets 58 and later): with x's bytes and the entries a row a block of 2M columns, both read
from the set's names ("eN": entries a row a block, "over-NM": columns).

    python3 score_blocked.py TURNS.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import re

def main(turns: str) -> None:
    data = json.loads(Path(turns).read_text())
    times: dict = {}
    for r in data["results"]:
        if r["status"] == "ok":
            key = (Path(r["source"]).stem, r["dtype"])
            times.setdefault(key, {})[r["kernel"]] = r["ms"]
    print(f"{'matrix':<32} {'dtype':<8} {'x MB':>5} {'e':>6}  blocked/staged blocked/vector blocked/best  "
          f"auto/lean")
    for (name, dtype), t in sorted(times.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        n_cols = float(re.search(r"over-([\d.]+)M", name).group(1)) * 1e6
        x_mb = n_cols * (4 if dtype == "float32" else 8) / 1e6
        e = int(re.search(r"-e(\d+)-", name).group(1))
        lean = min(t["cusparse"], t["cusparse:2"])
        best = min(t["staged"], t["vector"])
        print(f"{name:<32} {dtype:<8} {x_mb:5.0f} {e:6.0f}  {t['staged'] / t['blocked']:14.2f} "
              f"{t['vector'] / t['blocked']:14.2f} {best / t['blocked']:13.2f}  {lean / t['auto']:9.3f}")


if __name__ == "__main__":
    main(*sys.argv[1:])
