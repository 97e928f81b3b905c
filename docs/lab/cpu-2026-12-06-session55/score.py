"""A turns.json with auto's `picked` field (session 55's time_turns): per matrix and dtype, what auto ran and its
speed over the lean cuSPARSE pair (the faster of ALG1 and ALG2), the best timed spla kernel, auto over that best,
and blocked over staged measured beside the model's prediction; then per dtype the geomeans, the worst run, auto
within 15% of the best, and the model's rms log error over runs with more than one column block.

    python3 score.py TURNS.json
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

times: dict = {}
picked: dict = {}
for r in json.loads(Path(sys.argv[1]).read_text())["results"]:
    if r["status"] == "ok":
        key = (Path(r["source"]).stem, r["dtype"])
        times.setdefault(key, {})[r["kernel"]] = r["ms"]
        if r["kernel"] == "auto":
            picked[key] = r["picked"]
for dtype in ("float32", "float64"):
    print(f"{dtype}: matrix, auto's kernel, auto over the lean pair, best spla kernel (over the pair), auto over best,"
          " blocked/staged measured (predicted)")
    auto_logs, best_logs, errors, within = [], [], [], 0
    runs = sorted(k for k in times if k[1] == dtype)
    for key in runs:
        t = times[key]
        lean = min(t["cusparse"], t.get("cusparse:2", math.inf))
        spla_kernels = {k: v for k, v in t.items() if not k.startswith("cusparse")}
        best = min(spla_kernels, key=spla_kernels.get)
        auto = lean / t["auto"]
        auto_logs.append(math.log(auto))
        best_logs.append(math.log(lean / t[best]))
        within += t[best] / t["auto"] >= 1 / 1.15
        found = re.search(r"predicted ([0-9.]+)x", picked[key])
        ratio = t["staged"] / t["blocked"] if "blocked" in t and "staged" in t else float("nan")
        prediction = ""
        if found:
            p = float(found.group(1))
            prediction = f"{ratio:.2f} ({p:.2f})"
            if p > 0:  # 0: the model's guard (CSR order rereads under 10% more lines than block order)
                errors.append(math.log(ratio / p))
        print(f"  {key[0]:<28} {picked[key].split(',')[0]:<12} {auto:6.3f}x  {best:<10} {lean / t[best]:6.3f}x  "
              f"{t[best] / t['auto']:5.3f}  {prediction}")
    geo = math.exp(sum(auto_logs) / len(auto_logs))
    print(f"  auto geomean {geo:.3f}x (worst {math.exp(min(auto_logs)):.3f}), best spla kernel "
          f"{math.exp(sum(best_logs) / len(best_logs)):.3f}x, auto within 15% of the best on {within}/{len(runs)}, "
          f"model rms log error {math.sqrt(sum(e * e for e in errors) / len(errors)):.3f} over {len(errors)} runs")
