"""Read the regular-large class's records under the rule before session 22 and under H1 (session
21's hypothesis: float32 rows of >= 7 on average there run segmented; the code's rule since
0c4faaa, class regular-large-packed), by half. No GPU: fit_auto's items.

    PYTHONPATH=.:scripts python docs/lab/h200-2026-12-04-session22/h1_readout.py \\
        --stats docs/lab/h200-2026-12-03-session8/corpus-stats.json \\
        --near-stats docs/lab/h200-2026-12-04-session19/near-stats.json RESULTS.json ...
"""
import argparse
import dataclasses
import json
import math
from pathlib import Path

import fit_auto

from spla.planning.spmv import AUTO


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("results", nargs="+", type=Path)
    parser.add_argument("--stats", type=Path)
    parser.add_argument("--near-stats", type=Path)
    args = parser.parse_args()
    near = json.loads(args.near_stats.read_text()) if args.near_stats else {}
    items = fit_auto.load(args.results, None, args.stats, "device_us", near)
    before = dataclasses.replace(AUTO, packed_mean=math.inf)  # no regular-large-packed class
    groups: dict = {}
    for i in items:
        if fit_auto._class(i, before) != "regular-large" or not {"staged", "segmented"} <= i["times"].keys():
            continue
        best = min(i["times"].values())
        rule = best / i["times"][fit_auto.picked(i, before)]
        h1 = best / i["times"][fit_auto.picked(i, AUTO)]
        half = "held-out-11" if "/h11/" in i["name"] else i["half"]
        groups.setdefault((half, i["dtype"]), []).append((i["name"], i["stats"].mean, rule, h1))
    for (half, dtype), rows in sorted(groups.items()):
        changed = [r for r in rows if r[2] != r[3]]
        rule_gm, h1_gm = fit_auto.geomean(r[2] for r in rows), fit_auto.geomean(r[3] for r in rows)
        print(f"{half:12s} {dtype}: {len(rows):3d} runs, rule {rule_gm:.3f} "
              f"({sum(r[2] < fit_auto.WITHIN for r in rows)} behind 15%), H1 {h1_gm:.3f} "
              f"({sum(r[3] < fit_auto.WITHIN for r in rows)} behind); {len(changed)} changed")
        for name, mean, rule, h1 in changed:
            print(f"    {Path(name).stem:34s} mean {mean:5.1f}  rule {rule:.3f}  H1 {h1:.3f}")
    if args.near_stats:
        args.near_stats.write_text(json.dumps(near, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
