"""Session 66: set 70's rule beside cuSPARSE SpMM (re-timed in the same runs by tuned_spmm.py), host only.

For each (size, dtype, k): geomean of cuSPARSE's device time over the rule's (the rule call 1 ran, re-timed on a
fresh X after tuning, both checked against a float64 product), the runs under 1.0x, and the same per call from
Python. Also counts the runs where the library's rule now (regk's row floor, fitted after call 1) picks another
kernel than call 1's rule did.

    PYTHONPATH=. python3 docs/lab/gpu-2026-12-07-session66/set70_anchor.py
"""

from __future__ import annotations

import json
import math
from collections import defaultdict

import fit_short as F


def main() -> None:
    runs = {(r["size"], r["matrix"], r["dtype"], r["k"]): r for r in F.corpus_runs(F.CALL1 / "set70", 17, "70")}
    groups = defaultdict(list)
    moved = 0
    for size in ("2.5e5", "8e5"):
        for rec in json.loads((F.CALL1 / "set70" / size / "tuned_spmm.json").read_text())["records"]:
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
        gm = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))  # noqa: E731
        print(f"{key[0]} {key[1]} k={key[2]}: {len(dev)}, {gm(dev):.2f} ({sum(d < 1 for d in dev)}), {gm(call):.2f}")
    print(f"runs where the library's rule now picks another kernel than call 1's: {moved}")


if __name__ == "__main__":
    main()
