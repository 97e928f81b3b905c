"""ab_kernel.py's ab.json as a table: each variant's speed over the "before" kernel and over cuSPARSE.

    python3 ab_table.py call4-65de7dd/ab27-float32/ab.json call4-65de7dd/ab27-float64/ab.json
"""

from __future__ import annotations

import json
import sys


def main(paths: list[str]) -> None:
    for path in paths:
        results = json.load(open(path))["results"]
        table: dict[str, dict] = {}
        for r in results:
            table.setdefault(r["source"].split("/")[-1].removesuffix(".npz"), {})[r["variant"]] = r
        variants = sorted({v for t in table.values() for v in t} - {"before"})
        print(results[0]["dtype"], " (each variant over before; over cuSPARSE)")
        for name, t in table.items():
            before = t["before"]["ms"]
            cells = "  ".join(f"{v} {before / t[v]['ms']:.3f}x ({t[v]['speedup']:.2f}x cus)" for v in variants)
            print(f"  {name:26s} before {t['before']['speedup']:.2f}x cus  {cells}")


if __name__ == "__main__":
    main(sys.argv[1:])
