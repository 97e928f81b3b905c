"""Scores call 2's bench of set 36 and set 30's runs against the README's predictions (no GPU):
for each matrix and dtype, its mean run (rebuilt on the CPU from the set's maker), rle over staged,
auto's kernel and auto over the lean cuSPARSE call (faster of ALG1/ALG2), by device time.

    PYTHONPATH=. python3 docs/lab/cpu-2026-12-05-session44/score36.py held-out-36.json [--runs runs.json]
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

import numpy as np


def read(path: Path) -> list[dict]:
    text = gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()
    return json.loads(text)["results"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("--runs", type=Path, help="JSON of {matrix name: mean run}, measured on the CPU")
    args = parser.parse_args(argv)
    runs = json.loads(args.runs.read_text()) if args.runs else {}
    print("| matrix | mean run | dtype | rle / staged | rle / warp (rule's lanes) | auto runs | auto / lean "
          "| best spla |")
    print("| --- | ---: | --- | ---: | ---: | --- | ---: | --- |")
    for r in read(args.results):
        if r.get("status") != "ok":
            continue
        t = {row["kernel"]: row["device_us"] for row in r["rows"] if row.get("status") == "ok" and "device_us" in row}
        lean = min(t[k] for k in ("cusparse:1", "cusparse:2") if k in t)
        name = Path(r["name"]).stem
        spla_kernels = {k: v for k, v in t.items() if not k.startswith("cusparse") and k not in ("auto", "tune")}
        best = min(spla_kernels, key=spla_kernels.get)
        rle = t.get("rle", np.nan)
        print(f"| {name} | {runs.get(name, float('nan')):.2f} | {r['dtype']} | {t['staged'] / rle:.3f} | "
              f"{t['warp'] / rle:.3f} | {r.get('auto_kernel')} | {lean / t['auto']:.3f} | "
              f"{best} ({lean / t[best]:.3f}) |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
