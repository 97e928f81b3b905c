"""What doubling vector's lanes did in the tuner's own measurements: for every record whose tuner
timed vector at its default lanes and at twice them, the default's time over the doubled one
(above 1: more lanes were faster), by mean row length; the rows where the default had 2 lanes
(float32 rows of about 17-32) listed apart. Session 37's reading of the runs class.

    PYTHONPATH=. python3 docs/lab/cpu-2026-12-05-session37/vector_lanes.py
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "scripts"))
from fit_auto import read_records  # noqa: E402


def main() -> int:
    latest = {}
    for f in (ROOT / "docs/lab/h100-2026-12-05-session36/rule_files.txt").read_text().split():
        for r in read_records(ROOT / f):
            if r.get("status") == "ok" and "tune" in r:
                latest[r["name"], r["dtype"]] = r
    out = []
    for (name, dtype), r in latest.items():
        timed = {c["kernel"]: c["us"] for c in r["tune"]["candidates"] if c.get("status") == "ok"}
        vector = {k: v for k, v in timed.items() if k.startswith("vector")}
        lanes = sorted(int(k.split(":")[1]) for k in vector if ":" in k)
        if "vector" not in vector or not lanes:
            continue
        # the tuner times the default and its half and double (a half of 1 lane is not a kernel)
        double = lanes[-1] if len(lanes) == 1 or lanes[-1] == 4 * lanes[0] else None
        if double is None:
            continue
        m = r["matrix"]
        out.append((m["nnz"] / max(m["rows"], 1), dtype, double // 2, vector["vector"] / vector[f"vector:{double}"],
                    vector["vector"] / min(timed.values()), m["nnz"], name))
    out.sort()
    for mean, dtype, default, gain, share, nnz, name in out:
        print(f"{mean:7.1f} {dtype} default lanes {default:2d}  doubled faster by {gain:.2f}  "
              f"vector/best {share:.2f}  nnz {nnz / 1e6:6.1f}M  {name[:45]}")
    two = [o[3] for o in out if o[2] == 2]
    print(f"\ndefault 2 lanes: {len(two)} records, doubled faster on {sum(g > 1.02 for g in two)}, "
          f"slower on {sum(g < 0.98 for g in two)}, range {min(two):.2f}-{max(two):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
