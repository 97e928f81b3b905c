"""Scores I2 (this folder's README) from the device call's set 32 record: staged (I2's pick) over
adaptive2 (today's pick), by device time and per call, both dtypes.

    PYTHONPATH=. python3 score32.py ../h100-2026-12-05-session39/held-out-32.json.gz
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts"))
import fit_auto  # noqa: E402

CONTROLS = ("pareto-2.2-18k", "lognormal-2.2-1.3-12k", "preferential-16k-7")


def geomean(values) -> float:
    values = list(values)
    return math.exp(sum(map(math.log, values)) / len(values))


def main(paths) -> int:
    device, call, lean = {}, {}, {}
    for path in paths:
        for r in fit_auto.read_records(path):
            rows = {row["kernel"]: row for row in r["rows"] if "device_us" in row}
            key = (Path(r["name"]).stem, r["dtype"])
            device[key] = rows["adaptive2"]["device_us"] / rows["staged"]["device_us"]
            call[key] = rows["adaptive2"]["per_call_us"] / rows["staged"]["per_call_us"]
            anchor = min(rows[k]["device_us"] for k in fit_auto.ANCHORS if k in rows)
            lean[key] = (anchor / rows["staged"]["device_us"], anchor / rows["adaptive2"]["device_us"])
    a = sorted(k for k in device if k[0] not in CONTROLS)
    wins = sum(device[k] >= 1 for k in a)
    first = wins >= 11 and geomean(device[k] for k in a) >= 1.10
    second = geomean(call[k] for k in a) >= 1.03
    print(f"I2a device: staged at least as fast on {wins}/{len(a)}, geomean {geomean(device[k] for k in a):.3f} "
          f"(predicted >= 11/16, >= 1.10): {'held' if first else 'failed'}")
    print(f"I2a per call: geomean {geomean(call[k] for k in a):.3f} (predicted >= 1.03): "
          f"{'held' if second else 'failed'}")
    for k in a:
        print(f"  {k[0]:24s} {k[1]:8s} staged/adaptive2 device {device[k]:.3f} per call {call[k]:.3f}  "
              f"over the lean call: staged {lean[k][0]:.2f}, adaptive2 {lean[k][1]:.2f}")
    b = sorted(k for k in device if k[0] in CONTROLS)
    kept = sum(device[k] <= 1 for k in b)
    held = kept >= 4
    print(f"I2b: adaptive2 at least as fast on {kept}/{len(b)} (predicted >= 4/6): {'held' if held else 'failed'}")
    for k in b:
        print(f"  {k[0]:24s} {k[1]:8s} staged/adaptive2 device {device[k]:.3f}")
    print(f"decision (I2a and I2b): {'taken' if first and second and held else 'not taken'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
