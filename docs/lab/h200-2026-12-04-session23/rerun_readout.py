"""How the corpus re-run on the bitmap segmented kernel moved each record (no GPU): for every
(matrix, dtype) measured in both the old files and the re-run, the best kernel and the code
rule's pick with its share of the best, before and after, and per rule class the geomean of
segmented's time over the best kernel's, before and after.

    python3 rerun_readout.py --old OLD.json ... --new NEW.json ... [--stats S] [--near-stats N]

OLD: fit_auto.py's usual files; NEW: this session's re-run (read after OLD, as fit_auto does).
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts"))
import fit_auto  # noqa: E402

from spla.planning.spmv import AUTO  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", nargs="+", required=True)
    parser.add_argument("--new", nargs="+", required=True)
    parser.add_argument("--stats", type=Path)
    parser.add_argument("--near-stats", type=Path)
    args = parser.parse_args(argv)
    near = json.loads(args.near_stats.read_text()) if args.near_stats and args.near_stats.is_file() else {}
    old = {(i["name"], i["dtype"]): i for i in fit_auto.load(args.old, None, args.stats, near_cache=near)}
    new = {(i["name"], i["dtype"]): i for i in fit_auto.load(args.new, None, args.stats, near_cache=near)}
    both = sorted(set(old) & set(new))
    print(f"{len(both)} records in both, {len(set(new) - set(old))} new only\n")
    print("| matrix | dtype | class | best before | best now | pick | pick's share before | now |")
    print("| --- | --- | --- | --- | --- | --- | ---: | ---: |")
    seg = collections.defaultdict(lambda: ([], []))
    for key in both:
        o, n = old[key], new[key]
        klass = fit_auto._class(n, AUTO)
        for item, store in ((o, seg[klass][0]), (n, seg[klass][1])):
            if "segmented" in item["times"]:
                store.append(min(item["times"].values()) / item["times"]["segmented"])
        q_old, q_new = fit_auto.quality(o, AUTO), fit_auto.quality(n, AUTO)
        best_old = min(o["times"], key=o["times"].get)
        best_new = min(n["times"], key=n["times"].get)
        if best_old != best_new or abs(q_new - q_old) > 0.05 or q_new < 0.85:
            print(f"| {key[0]} | {key[1]} | {klass} | {best_old} | {best_new} | {fit_auto.picked(n, AUTO)} "
                  f"| {q_old:.2f} | {q_new:.2f} |")
    print("\n| class | records | segmented's share of the best, before | now |")
    print("| --- | ---: | ---: | ---: |")
    for klass, (before, now) in sorted(seg.items()):
        print(f"| {klass} | {len(now)} | {fit_auto.geomean(before):.3f} | {fit_auto.geomean(now):.3f} |")
    if args.near_stats is not None:
        args.near_stats.write_text(json.dumps(near, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
