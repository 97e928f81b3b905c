"""Where the large records stand (no GPU): for each dtype, auto's geomean over the lean cuSPARSE call
and the best spla kernel's, then the families that keep the geomean furthest from 1.3x (the sum over
their matrices of log 1.3 - log auto's ratio), with each family's auto and best.

    PYTHONPATH=. python3 docs/lab/cpu-2026-12-05-session44/breakdown.py > breakdown.txt

(reads session 43's rule_files.txt and the replay's stats caches /tmp/stats.json, /tmp/near.json)
"""
import collections
import json
import math
import re
import sys
from pathlib import Path

sys.path[:0] = ["scripts", "."]
import fit_auto  # noqa: E402

from spla.planning import spmv  # noqa: E402

files = open("docs/lab/h100-2026-12-05-session43/rule_files.txt").read().split()
near = json.loads(Path("/tmp/near.json").read_text())
items = fit_auto.load(files, None, Path("/tmp/stats.json"), "device_us", near_cache=near,
                      spans=fit_auto.read_spans(Path("docs/lab/cpu-2026-12-05-session36/spans-packed.json")))
g = fit_auto.geomean
for dtype in ("float32", "float64"):
    group = [i for i in items if i["dtype"] == dtype and i["anchor"] and i["stats"].nnz >= fit_auto.LARGE]
    fam = collections.defaultdict(list)
    for i in group:
        p = fit_auto.picked(i, spmv.AUTO)
        a = i["anchor"] / i["times"][p]
        b = i["anchor"] / min(t for k, t in i["times"].items() if k != "cusparse")
        name = re.sub(r"[:@].*", "", i["name"].split("/")[-1])
        name = re.sub(r"(-\d[\w.]*)+$", "", name)
        fam[(i["half"], name)].append((a, b, p, i["name"]))
    print(dtype, len(group), "auto", round(g(x[0] for v in fam.values() for x in v), 3),
          "best", round(g(x[1] for v in fam.values() for x in v), 3))
    logsum = sum(math.log(x[0]) for v in fam.values() for x in v)
    rows = []
    for k, v in fam.items():
        deficit = sum(math.log(1.3) - math.log(x[0]) for x in v)
        picks = collections.Counter(x[2] for x in v).most_common(2)
        rows.append((deficit, k, len(v), g(x[0] for x in v), g(x[1] for x in v), picks))
    for r in sorted(rows, reverse=True)[:25]:
        print(f"  deficit {r[0]:6.2f} {r[1]} n={r[2]} auto {r[3]:.3f} best {r[4]:.3f} {r[5]}")
