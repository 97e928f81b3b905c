"""Where auto stays under the issue's large-matrix floor: every (matrix, dtype) of at least 10M
nonzeros in the records, auto's pick (the code's rule, replayed) and the best kernel each over the
lean cuSPARSE call (device time), the 40 lowest listed; per dtype the geomeans of both (the best
kernel's is the ceiling no rule over today's kernels passes). Then the medium class's large
matrices with every family's share of the best time (the runs class, session 37's README).

    PYTHONPATH=. python3 docs/lab/cpu-2026-12-05-session37/below.py [MORE RECORD FILES] [--spans SPANS]

(session 38: record files after rule_files.txt's, and the tile spans P4's rule reads.)

Stats and near shares come from /tmp/stats.json and /tmp/near.json (copies of
../h200-2026-12-03-session8/corpus-stats.json and ../h200-2026-12-04-session19/near-stats.json).
"""

import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT))
import fit_auto  # noqa: E402

from spla.planning.spmv import AUTO  # noqa: E402

FAMILIES = ("vector", "warp", "staged", "segmented", "adaptive", "adaptive2", "cusparse")


def main(argv) -> int:
    spans = None
    if "--spans" in argv:
        at = argv.index("--spans")
        spans, argv = Path(argv[at + 1]), argv[:at] + argv[at + 2:]
    files = [ROOT / f for f in (ROOT / "docs/lab/h100-2026-12-05-session36/rule_files.txt").read_text().split()]
    near = json.loads(Path("/tmp/near.json").read_text())
    items = fit_auto.load([*files, *argv], None, Path("/tmp/stats.json"), near_cache=near,
                          spans=fit_auto.read_spans(spans))
    large = [i for i in items if i["anchor"] and i["stats"].nnz >= 1e7]
    rows = []
    for i in large:
        pick = fit_auto.picked(i, AUTO)
        best_time, best = min((t, k) for k, t in i["times"].items())
        rows.append((i["anchor"] / i["times"].get(pick, math.inf), i["name"], i["dtype"], pick,
                     i["anchor"] / best_time, best, fit_auto._class(i, AUTO)))
    rows.sort()
    for auto, name, dtype, pick, best, best_kernel, klass in rows[:40]:
        print(f"{auto:.3f} {name[:45]:45s} {dtype} pick={pick:10s} best={best:.3f} {best_kernel:10s} {klass}")
    for dtype in ("float32", "float64"):
        group = [r for r in rows if r[2] == dtype]
        auto, best = [r[0] for r in group], [r[4] for r in group]
        print(f"{dtype}: {len(group)} matrices, auto {fit_auto.geomean(auto):.3f} "
              f"(below 0.95: {sum(a < 0.95 for a in auto)}), best kernel {fit_auto.geomean(best):.3f} "
              f"(below 0.95: {sum(b < 0.95 for b in best)})")
    print("\nthe medium class (auto: vector, or dia/band where found), share of the best time:")
    for i in sorted(large, key=lambda i: (i["dtype"], i["name"])):
        if fit_auto._class(i, AUTO) != "medium":
            continue
        t, best = i["times"], min(i["times"].values())
        shares = " ".join(f"{f[:5]}={best / t[f]:.2f}" for f in FAMILIES if f in t)
        print(f"{i['dtype']} {i['name'][:38]:38s} mean={i['stats'].mean:6.1f} near={i['near']():.2f} {shares}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
