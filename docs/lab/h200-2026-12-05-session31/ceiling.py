"""What no choice among today's kernels can beat on large matrices: the best spla kernel per matrix
(the tuner's device times, every candidate checked) over the faster cuSPARSE algorithm, on every
record of at least 10M nonzeros, per dtype; beside auto's bench figure on the same runs.

    python3 docs/lab/h200-2026-12-05-session31/ceiling.py [RESULTS_DIR...]

Reads the records listed in ../h200-2026-12-05-session26/rule_files.txt and every held-out-*.json(.gz)
in the RESULTS_DIRs (this session: next-1e3248e).
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts"))
from fit_auto import read_records  # noqa: E402  (plain or gzipped records)

ROOT = Path(__file__).resolve().parents[3]


def geomean(values) -> float:
    values = list(values)
    return math.exp(sum(map(math.log, values)) / len(values))


def main(dirs: list[str]) -> int:
    files = [ROOT / f for f in (ROOT / "docs/lab/h200-2026-12-05-session26/rule_files.txt").read_text().split()]
    files += [f for d in dirs for f in sorted(Path(d).glob("held-out-*.json*"))]
    runs = {}  # (matrix, dtype): (best kernel's speed over cuSPARSE, its name, auto's speed)
    for path in files:
        for r in read_records(path):
            if r.get("status") != "ok" or r["matrix"]["nnz"] < 1e7 or "tune" not in r:
                continue
            timed = [c for c in r["tune"]["candidates"] if c.get("status") == "ok"]
            anchor = [c["us"] for c in timed if c["kernel"].startswith("cusparse")]
            ours = [(c["us"], c["kernel"]) for c in timed if not c["kernel"].startswith("cusparse")]
            if not anchor or not ours:
                continue
            us, kernel = min(ours)
            bench = {row["kernel"]: row["device_us"] for row in r["rows"] if row.get("status") == "ok"}
            lean = min(v for k, v in bench.items() if k.startswith("cusparse"))
            runs[r["name"], r["dtype"]] = (min(anchor) / us, kernel, lean / bench["auto"] if "auto" in bench else None)
    for dtype in ("float32", "float64"):
        mine = {name: v for (name, d), v in runs.items() if d == dtype}
        autos = [v[2] for v in mine.values() if v[2]]
        print(f"{dtype}: {len(mine)} runs, best spla kernel {geomean(v[0] for v in mine.values()):.3f}x cuSPARSE, "
              f"auto {geomean(autos):.3f}x")
        print("  best kernels:", Counter(v[1].split(":")[0] for v in mine.values()).most_common())
        for speed, name, kernel, auto in sorted((v[0], n, v[1], v[2] or 0) for n, v in mine.items())[:10]:
            print(f"  {speed:.2f} {Path(name).name} ({kernel}; auto {auto:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
