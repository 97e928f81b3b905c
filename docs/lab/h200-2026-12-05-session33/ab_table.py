"""ab_kernel.py's ab.json as a table: each variant over the "before" kernel and over cuSPARSE.

    python3 ab_table.py call4-65de7dd/ab27-float32/ab.json call4-65de7dd/ab27-float64/ab.json
"""
import json, sys, math
for path in sys.argv[1:]:
    data = json.load(open(path))
    table = {}
    for r in data["results"]:
        table.setdefault(r["source"].split("/")[-1].replace(".npz", ""), {})[r["variant"]] = r
    variants = [v for v in ("committed", "wrap") if any(v in t for t in table.values())]
    print(data["results"][0]["dtype"], "  (variant over before; variant over cuSPARSE)")
    for name, t in table.items():
        b = t["before"]["ms"]
        cells = "  ".join(f"{v} {b / t[v]['ms']:.3f}x ({t[v]['speedup']:.2f}x cus)" for v in variants)
        print(f"  {name:26s} before {t['before']['speedup']:.2f}x cus  {cells}")
