"""P5 replayed over every record (no GPU): float32's packed class (auto: segmented) runs staged
where the median tile of 4,096 nonzeros gathers from at least L distinct 128-byte lines of x
(row_spans.py's tile_lines_median, by record name; records without one keep segmented). Prints,
per cut, the class's records that move and the held-out and large tables' figures that change.

    PYTHONPATH=. python3 p5_replay.py SPANS.json CUT [CUT ...] -- RECORD_FILES...

Written for the code before P5 (ef52a81; p5_replay.txt is that run). With P5 in the code the rule
reads the lines itself, so "cut inf" is P5 too: replay it with rule_trial.py --trial
packed-lines=inf (p5_replay_after.txt).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT))
import fit_auto  # noqa: E402

from spla.planning.spmv import AUTO  # noqa: E402


def main(argv) -> int:
    at = argv.index("--")
    spans = json.loads(Path(argv[0]).read_text())
    cuts = [float(c) for c in argv[1:at]]
    items = fit_auto.load(argv[at + 1:], None, Path("/tmp/stats.json"),
                          near_cache=json.loads(Path("/tmp/near.json").read_text()),
                          spans=fit_auto.read_spans(Path(argv[0])))
    for cut in [math.inf, *cuts]:
        def pick(i, cut=cut):
            code = fit_auto.picked(i, AUTO)
            lines = spans.get(i["name"], {}).get("tile_lines_median", 0.0)
            packed = fit_auto._class(i, AUTO) == "regular-large-packed"
            if packed and lines >= cut and "staged" in i["times"]:
                return "staged"
            return code
        print(f"cut {cut}:")
        for half in ("fit", "report", "held-out"):
            group = [i for i in items if i["half"] == half and i["dtype"] == "float32"]
            q = [min(i["times"].values()) / i["times"].get(pick(i), math.inf) for i in group]
            print(f"  {half:8s} float32: {len(q)} records, geomean {fit_auto.geomean(q):.4f}, "
                  f"within 15% {sum(x >= 1 / 1.15 for x in q)}")
        large = [i for i in items if i["anchor"] and i["stats"].nnz >= 1e7 and i["dtype"] == "float32"]
        over = [i["anchor"] / i["times"].get(pick(i), math.inf) for i in large]
        print(f"  large float32: {len(over)}, geomean {fit_auto.geomean(over):.4f}, worst {min(over):.3f}, "
              f"below 0.95: {sum(x < 0.95 for x in over)}")
        if cut != math.inf:
            for i in items:
                if pick(i) != fit_auto.picked(i, AUTO):
                    t = i["times"]
                    lines = spans[i["name"]]["tile_lines_median"]
                    print(f"    moves: {i['name'][-40:]:40s} {i['half']:8s} mean {i['stats'].mean:6.1f} lines "
                          f"{lines:6.0f} staged/segmented {t['segmented'] / t['staged']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
