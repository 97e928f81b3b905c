"""Session 66: a set's rule beside cuSPARSE SpMM (re-timed in the same runs by tuned_spmm.py), host only.

For each (size, dtype, k): geomean of cuSPARSE's device time over the rule's (the rule call 1 ran, re-timed on a
fresh X after tuning, both checked against a float64 product), the runs under 1.0x, and the same per call from
Python. Also counts the runs where the library's rule now picks another kernel than the rule that ran (set 70:
call 1's, before regk's row floor; set 73: session 66's, before dia's floor read the row length), and gives the
library's rule now beside cuSPARSE where its pick was re-timed in the run (as the rule then or the tuner's winner).

    PYTHONPATH=. python3 docs/lab/gpu-2026-12-07-session66/anchor.py [70 | 72 | 73 | 74]
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

import dia_floor
import fit_short as F

SETS = {"70": (F.CALL1 / "set70", 17), "72": (F.SET72, 23), "73": (dia_floor.SET73, 29), "74": (dia_floor.SET74, 31)}


def size_order(size: str) -> float:
    """A size folder's nonzeros (set 73's folder of generator specs, "bands", last)."""
    return float(size) if size[0].isdigit() else float("inf")


def ratios(folder: Path, runs: dict, now_rule):
    """For each run of a tuned_spmm.py set (one subfolder per size) that timed the rule and cuSPARSE: ((size, dtype,
    k), whether now_rule picks another kernel than the rule that ran, (cuSPARSE over the rule that ran by device
    time, the same per call, cuSPARSE over now_rule's pick by device time where the run re-timed it, as the rule
    that ran or the tuner's winner, else None)). ``runs``: the set's runs by (size, matrix, dtype, k), as
    fit_short.corpus_runs gives them. Used by session 68's fresh_bands.py too."""
    for path in sorted(folder.glob("*/tuned_spmm.json")):
        size = path.parent.name
        for rec in json.loads(path.read_text())["records"]:
            dev, call = rec["device_us"], rec["per_call_us"]
            if not {"rule", "cusparse"} <= dev.keys():
                continue
            now = now_rule(runs[(size, rec["matrix"], rec["dtype"], rec["k"])])
            now_as = "rule" if now == rec["rule"] else "tuned" if now == rec["tuned"] else None
            yield ((size, rec["dtype"], rec["k"]), now != rec["rule"],
                   (dev["cusparse"] / dev["rule"], call["cusparse"] / call["rule"],
                    dev["cusparse"] / dev[now_as] if now_as in dev else None))


def main(name: str) -> None:
    folder, seed = SETS[name]
    runs = {(r["size"], r["matrix"], r["dtype"], r["k"]): r for r in F.corpus_runs(folder, seed, name)}
    groups = defaultdict(list)
    moved = unmeasured = 0
    for key, differs, row in ratios(folder, runs, F.library_pick):
        moved += differs
        unmeasured += row[2] is None
        groups[key].append(row)
    print("size dtype k: runs, rule x cuSPARSE device time (runs under 1.0x), per call from Python; "
          "the library's rule now, device time (runs under 1.0x)")
    for key in sorted(groups, key=lambda g: (size_order(g[0]), g[1], g[2])):
        dev, call, now = zip(*groups[key])
        now = [x for x in now if x is not None]
        print(f"{key[0]} {key[1]} k={key[2]}: {len(dev)}, {F.geomean(dev):.2f} ({sum(d < 1 for d in dev)}), "
              f"{F.geomean(call):.2f}; {F.geomean(now):.2f} ({sum(d < 1 for d in now)})")
    print(f"runs where the library's rule now picks another kernel than the rule that ran: {moved}, "
          f"{unmeasured} of them neither the rule that ran nor the tuner's winner (left out of its column)")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "70")
