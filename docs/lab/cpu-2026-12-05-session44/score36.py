"""Scores call 1's turns of set 36 (time_turns.py: staged, rle and both cuSPARSE CSR algorithms in
turns, per call from Python) against the README's predictions (no GPU): each matrix's mean run
(measured on the CPU, mean_runs.json), rle over staged, both over the lean call (the faster of
ALG1/ALG2), and what auto runs under a minimum mean run (rle from it, staged below).

    PYTHONPATH=. python3 docs/lab/cpu-2026-12-05-session44/score36.py turns36/turns.json mean_runs.json \\
        [--min-run 6.5]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("turns", type=Path)
    parser.add_argument("runs", type=Path, help="JSON of {matrix name: mean run}, measured on the CPU")
    parser.add_argument("--min-run", type=float, default=6.5, help="auto runs rle from this mean run")
    args = parser.parse_args(argv)
    runs = json.loads(args.runs.read_text())
    ms: dict = defaultdict(dict)
    for r in json.loads(args.turns.read_text())["results"]:
        if r["status"] == "ok":
            ms[Path(r["source"]).stem, r["dtype"]][r["kernel"]] = r["ms"]
    print(f"| matrix | mean run | dtype | rle / staged | staged / lean | rle / lean "
          f"| auto (from {args.min_run:g}) / lean |")
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: |")
    autos: dict = defaultdict(list)
    for (name, dtype), t in sorted(ms.items(), key=lambda item: (runs[item[0][0]], item[0][1])):
        lean = min(t["cusparse"], t["cusparse:2"])
        auto = t["rle"] if runs[name] >= args.min_run else t["staged"]
        autos[dtype].append(lean / auto)
        print(f"| {name} | {runs[name]:.2f} | {dtype} | {t['staged'] / t['rle']:.3f} | {lean / t['staged']:.3f} | "
              f"{lean / t['rle']:.3f} | {lean / auto:.3f} |")
    for dtype, values in autos.items():
        print(f"\n{dtype}: auto over the lean call, geomean {np.exp(np.mean(np.log(values))):.3f} ({len(values)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
