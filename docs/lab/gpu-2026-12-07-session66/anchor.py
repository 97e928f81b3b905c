"""Session 66: a set's rule beside cuSPARSE SpMM (re-timed in the same runs by tuned_spmm.py), host only.

For each (size, dtype, k): geomean of cuSPARSE's device time over the rule's (the rule call 1 ran, re-timed on a
fresh X after tuning, both checked against a float64 product), the runs under 1.0x, and the same per call from
Python. Also counts the runs where the library's rule now picks another kernel than the rule that ran (set 70:
call 1's, before regk's row floor).

    PYTHONPATH=. python3 docs/lab/gpu-2026-12-07-session66/anchor.py [70 | 72]
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict

import fit_short as F

SETS = {"70": (F.CALL1 / "set70", 17), "72": (F.SET72, 23)}


def main(name: str) -> None:
    folder, seed = SETS[name]
    runs = {(r["size"], r["matrix"], r["dtype"], r["k"]): r for r in F.corpus_runs(folder, seed, name)}
    groups = defaultdict(list)
    moved = 0
    for path in sorted(folder.glob("*/tuned_spmm.json")):
        size = path.parent.name
        for rec in json.loads(path.read_text())["records"]:
            dev, call = rec["device_us"], rec["per_call_us"]
            if not {"rule", "cusparse"} <= dev.keys():
                continue
            groups[(size, rec["dtype"], rec["k"])].append((dev["cusparse"] / dev["rule"],
                                                           call["cusparse"] / call["rule"]))
            moved += F.pick(runs[(size, rec["matrix"], rec["dtype"], rec["k"])]) != rec["rule"]
    print("size dtype k: runs, rule x cuSPARSE device time (runs under 1.0x), per call from Python")
    for key in sorted(groups, key=lambda g: (float(g[0]), g[1], g[2])):
        dev = [d for d, _ in groups[key]]
        call = [c for _, c in groups[key]]
        print(f"{key[0]} {key[1]} k={key[2]}: {len(dev)}, {F.geomean(dev):.2f} ({sum(d < 1 for d in dev)}), "
              f"{F.geomean(call):.2f}")
    print(f"runs where the library's rule now picks another kernel than the rule that ran: {moved}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "70")
