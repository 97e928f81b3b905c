"""D2 read with band_lanes's width (D1's default) off the H200 data there is, since lanes46 never ran:
sets 30 and 36 from the tuner's turns in their bench records (the rule's rle and staged candidates),
sets 37 and 38 from time_turns.py (rle at auto's width, staged at its default). Prints each matrix's
rle / staged by mean run and the cut D2 reads in each dtype.

    PYTHONPATH=. python3 docs/lab/h200-2026-12-06-session46/cut_now.py
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np

from spla.planning import segmented

LAB = Path(__file__).resolve().parent.parent
S45 = LAB / "h200-2026-12-06-session45"
FLOOR, GEOMEAN = 0.98, 1.03


def geomean(values) -> float:
    return float(np.exp(np.mean(np.log(values))))


def from_tuner(path: Path):
    for r in json.loads(gzip.open(path).read())["records"]:
        c = {(x["kernel"], x["param"]): x["us"] for x in r["tune"]["candidates"] if x["status"] == "ok"}
        rle = [us for (kernel, _), us in c.items() if kernel == "rle"]
        staged = c.get(("staged", segmented.staged_default(np.dtype(r["dtype"]), r["matrix"]["nnz"])))
        staged = staged or c.get((f"staged:{segmented.staged_default(np.dtype(r['dtype']), r['matrix']['nnz'])}",
                                  segmented.staged_default(np.dtype(r["dtype"]), r["matrix"]["nnz"])))
        if rle and staged:
            yield Path(r["name"]).stem, r["dtype"], r["mean_run"], staged / rle[0]


def from_turns(path: Path, runs: dict):
    ms: dict = {}
    for r in json.loads(path.read_text())["results"]:
        if r["status"] == "ok":
            ms.setdefault((Path(r["source"]).stem, r["dtype"]), {})[r["kernel"]] = r["ms"]
    for (name, dtype), t in ms.items():
        yield name, dtype, runs[name]["mean_run"], t["staged"] / t["rle"]


def main() -> int:
    runs = {name: stat for f in ("run_stats_fit.json", "run_stats_38.json")
            for name, stat in json.loads((S45 / f).read_text()).items()}
    rows = [*from_tuner(S45 / "held-out-30-rle-with-runs.json.gz"), *from_tuner(S45 / "held-out-36-with-runs.json.gz"),
            *from_turns(S45 / "turns37" / "turns.json", runs),
            *from_turns(LAB / "h200-2026-12-06-session46" / "results" / "turns38-0" / "turns.json", runs)]
    for dtype in ("float32", "float64"):
        mine = sorted((run, gain, name) for name, d, run, gain in rows if d == dtype)
        print(f"\n{dtype}: mean run, rle / staged")
        for run, gain, name in mine:
            print(f"  {run:6.2f} {gain:.3f} {name}")
        for cut, _, _ in mine:
            held = [gain for run, gain, _ in mine if run >= cut]
            if min(held) >= FLOOR and geomean(held) >= GEOMEAN:
                print(f"{dtype}: cut {cut:g} ({len(held)} matrices from it: worst {min(held):.3f}, geomean "
                      f"{geomean(held):.3f})")
                break
        else:
            print(f"{dtype}: no cut holds")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
