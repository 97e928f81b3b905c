"""The held-out records where the code's auto pick runs at under fit_auto.WITHIN (0.85) of the best
spla kernel by device time, with the five fastest kernels and the lean cuSPARSE call. From the repository root,
with /tmp/stats.json and /tmp/near.json as rule_trial.py's docstring makes them:

    S=docs/lab/h100-2026-12-05-session39
    PYTHONPATH=. python3 docs/lab/cpu-2026-12-05-session39/misses.py \
        $(cat docs/lab/h100-2026-12-05-session38/rule_files.txt) $S/held-out-3[012].json.gz
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

LAB = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(LAB.parents[1] / "scripts"))
sys.path.insert(0, str(LAB / "cpu-2026-12-04-session27"))
import fit_auto  # noqa: E402
import rule_trial  # noqa: E402


def main(files) -> int:
    near = json.loads(Path("/tmp/near.json").read_text())
    items = fit_auto.load(files, None, Path("/tmp/stats.json"), "device_us", near_cache=near,
                          spans=fit_auto.read_spans(LAB / "cpu-2026-12-05-session36" / "spans-packed.json"))
    lines = []
    for item, (pick, share) in zip(items, rule_trial.picks(items, {})):
        if item["half"] == "held-out" and share < fit_auto.WITHIN:
            t = item["times"]
            fastest = " ".join(f"{k}={t[k]:.1f}" for k in sorted(t, key=t.get)[:5])
            lines.append((share, f"{share:.2f} {item['dtype']} {Path(item['name']).stem[:34]:34s} "
                                 f"mean={item['stats'].mean:.1f} pick={pick} {fastest} anchor={item['anchor']:.1f}"))
    print("\n".join(line for _, line in sorted(lines)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
