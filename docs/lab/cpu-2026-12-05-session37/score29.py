"""Session 36's predictions P4a-P4c (set 29) and U1a-U1b (its pattern twins) scored from the
pending call's output, as written before the run (../cpu-2026-12-05-session36/README.md):

- P4a: five small windows at 40M, staged at least as fast as segmented on at least 4, geomean >= 1.08;
- P4b: four wide windows, segmented at least as fast as staged on at least 3;
- P4c: three small windows at 10M, staged below 0.95x segmented on at least 2;
- U1a: scattered pattern twins (zipf-columns, random-uniform), one-value staged 1.03-1.15x segmented;
- U1b: wide-window pattern twins, one-value staged 0.70-0.98x segmented.

float32, device time, staged over segmented (above 1: staged faster).

    python3 score29.py NEXT/held-out-29.json[.gz] NEXT/pattern29.json
"""

import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts"))
from fit_auto import read_records  # noqa: E402

SMALL_40M = ("normal-14-18-sigma-900", "normal-24-28-sigma-1400", "blocks-20-4096", "blocks-40-8192",
             "normal-9-11-sigma-1500")
WIDE = ("normal-20-28-sigma-6000", "blocks-24-32768", "normal-12-16-sigma-12000", "blocks-48-65536")
SMALL_10M = ("normal-10M-14-18-sigma-900", "blocks-10M-20-4096", "blocks-10M-24-6144")
SCATTERED = ("zipf-columns", "random-uniform")


def geomean(values) -> float:
    values = list(values)
    return math.exp(sum(map(math.log, values)) / len(values))


def stem(source: str) -> str:
    return Path(source).name.split(".")[0]


def main(bench: str, pattern: str) -> int:
    ratio = {}
    for r in read_records(bench):
        if r.get("status") == "ok" and r["dtype"] == "float32":
            t = {row["kernel"]: row["device_us"] for row in r["rows"] if "device_us" in row}
            ratio[stem(r["name"])] = t["segmented"] / t["staged"]
            print(f"{stem(r['name']):28s} staged/segmented speed {ratio[stem(r['name'])]:.3f}  "
                  f"auto ran {r.get('auto_kernel', '?')}")

    def verdict(name, names, test):
        got = [ratio[n] for n in names if n in ratio]
        print(f"{name}: {len(got)}/{len(names)} measured, {' '.join(f'{g:.3f}' for g in got)} -> "
              f"{'held' if len(got) == len(names) and test(got) else 'failed'}")

    verdict("P4a", SMALL_40M, lambda g: sum(x >= 1.0 for x in g) >= 4 and geomean(g) >= 1.08)
    verdict("P4b", WIDE, lambda g: sum(x <= 1.0 for x in g) >= 3)
    verdict("P4c", SMALL_10M, lambda g: sum(x < 0.95 for x in g) >= 2)
    twins = {}
    for r in json.loads(Path(pattern).read_text())["records"]:
        one, seg = r.get("staged-uniform", {}), r.get("segmented", {})
        if one.get("status") == "ok" and seg.get("status") == "ok":
            twins[stem(r["source"])] = seg["device_us"] / one["device_us"]
    for name, value in sorted(twins.items()):
        print(f"{name:28s} one-value staged/segmented speed {value:.3f}")
    scattered = [v for n, v in twins.items() if any(n.startswith(s) for s in SCATTERED)]
    wide = [v for n, v in twins.items() if any(n.startswith(w) for w in WIDE)]
    print(f"U1a: {' '.join(f'{v:.3f}' for v in scattered)} -> "
          f"{'held' if len(scattered) == 2 and all(1.03 <= v <= 1.15 for v in scattered) else 'failed'}")
    print(f"U1b: {' '.join(f'{v:.3f}' for v in wide)} -> "
          f"{'held' if len(wide) == 4 and all(0.70 <= v <= 0.98 for v in wide) else 'failed'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
