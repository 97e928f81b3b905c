"""T1 of this folder's README: each ab_kernel.py run's tail variant against committed, per matrix and dtype, with
each matrix's mean row (where run_stats.py knows it) and the geomean and worst per dtype.

    python3 docs/lab/h100-2026-12-06-session47/score47.py results/tail47-rle/ab.json [--runs RUNS.json ...]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ab", type=Path)
    parser.add_argument("--runs", type=Path, nargs="*", default=[])
    args = parser.parse_args(argv)
    stats = {name: s for path in args.runs for name, s in json.loads(path.read_text()).items()}
    ms: dict = defaultdict(dict)
    for r in json.loads(args.ab.read_text())["results"]:
        if r["status"] != "ok":
            print("not ok:", r["source"], r["dtype"], r["variant"], r["status"])
            continue
        ms[Path(r["source"]).name.removesuffix(".npz"), r["dtype"]][r["variant"]] = r["ms"]
    gains = defaultdict(list)
    print("| matrix | mean row | dtype | committed ms | tail / committed |")
    print("| --- | ---: | --- | ---: | ---: |")
    for (name, dtype), t in sorted(ms.items(), key=lambda kv: (stats.get(kv[0][0], {}).get("mean_row", 0), kv[0])):
        g = t["committed"] / t["tail"]
        gains[dtype].append(g)
        row = stats.get(name, {}).get("mean_row")
        print(f"| {name} | {'-' if row is None else f'{row:.1f}'} | {dtype} | {t['committed']:.4f} | {g:.3f} |")
    for dtype, g in sorted(gains.items()):
        print(f"{dtype}: geomean {np.exp(np.mean(np.log(g))):.3f}, worst {min(g):.3f}, best {max(g):.3f} ({len(g)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
