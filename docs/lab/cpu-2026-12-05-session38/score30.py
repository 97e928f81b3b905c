"""Scores session 38's predictions (this folder's README) from the device call's records: staged
(M3's pick) over vector (today's pick) by device time, per matrix and dtype.

    PYTHONPATH=. python3 score30.py ../h100-2026-12-05-session38/held-out-30-main.json.gz \\
        ../h100-2026-12-05-session38/runs-rerun-main.json.gz
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts"))
import fit_auto  # noqa: E402

CONTROLS = ("aligned-runs-4x8-local-3000", "blocks-4x4-6", "blocks-16x16-3")
RERUN_RUNS = ("runs-4x8-local-3000", "runs-2x16-local-1000")


def ratios(paths):
    """{(matrix, dtype): (staged over vector, staged over the lean call, vector over it)}, device time."""
    out = {}
    for path in paths:
        for r in fit_auto.read_records(path):
            if r.get("status") != "ok":
                continue
            t = {row["kernel"]: row["device_us"] for row in r["rows"] if "device_us" in row}
            lean = min(t[k] for k in fit_auto.ANCHORS if k in t)
            name = Path(r["name"]).stem if r["name"].endswith(".npz") else r["name"]
            out[name, r["dtype"]] = (t["vector"] / t["staged"], lean / t["staged"], lean / t["vector"])
    return out


def verdict(label, runs, held):
    print(f"{label}: {'held' if held else 'failed'}")
    for (name, dtype), (sv, ss, vs) in runs:
        print(f"  {name:30s} {dtype}: staged/vector {sv:.3f}  over the lean call: staged {ss:.2f}, vector {vs:.2f}")


def main(paths) -> int:
    r = ratios(paths)
    m3a = [(k, v) for k, v in sorted(r.items()) if k[0].startswith("runs-") and k[0] not in RERUN_RUNS
           and not k[0].startswith(("runs-3x12", "runs-6x4-local-5000"))]
    sv = [v[0] for _, v in m3a]
    geo = math.exp(sum(map(math.log, sv)) / len(sv))
    verdict(f"M3a ({sum(x >= 1 for x in sv)}/{len(sv)} at least as fast, geomean {geo:.3f}, lowest {min(sv):.3f}; "
            "predicted >= 13/16, >= 1.10, none below 0.95)",
            m3a, sum(x >= 1 for x in sv) >= 13 and geo >= 1.10 and min(sv) >= 0.95)
    controls = [(k, v) for k, v in sorted(r.items()) if k[0] in CONTROLS]
    verdict(f"M3b ({sum(v[0] >= 0.95 for _, v in controls)}/{len(controls)} at least 0.95; predicted >= 5/6)",
            controls, sum(v[0] >= 0.95 for _, v in controls) >= 5)
    rerun = [(k, v) for k, v in sorted(r.items()) if k[0] in RERUN_RUNS]
    blocks = [(k, v) for k, v in sorted(r.items()) if k[0] == "block-sparse@40M"]
    verdict("R (runs-4x8/2x16 at least 1.3x vector; block-sparse@40M 0.90-1.10)", rerun + blocks,
            all(v[0] >= 1.3 for _, v in rerun) and all(0.90 <= v[0] <= 1.10 for _, v in blocks))
    blocks_moved = (("block-sparse@40M", "float32"), ("block-sparse@40M", "float64"), ("block-sparse@10M", "float64"))
    moved = controls + [(k, v) for k, v in sorted(r.items()) if k in blocks_moved]
    below = [k for k, v in moved if v[0] < 0.95]
    verdict(f"the decision's clause (staged below 0.95x vector on at most one of the controls and the moved "
            f"block-sparse runs): {len(below)} {below}", moved, len(below) <= 1)
    set23 = ("runs-3x12", "runs-6x4-local-5000")
    others = [(k, v) for k, v in sorted(r.items()) if k[0].startswith(set23) or k == ("block-sparse@10M", "float32")]
    verdict("(not predicted: set 23's runs, block-sparse@10M float32, where x is 1 MB and M3 keeps vector)",
            others, True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
