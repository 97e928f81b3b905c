"""Set 53's scores: auto over the lean cuSPARSE pair (the faster of ALG1 and ALG2), device time, per matrix and
dtype, with the kernel the rule picks (read on the host from the same .npz files) and each dtype's geomean.

    PYTHONPATH=. python3 score53.py TURNS.json DIR_OF_NPZ
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import scipy.sparse as sp

import spla
from spla.planning.spmv import rule_kernel


def main(turns: str, folder: str) -> None:
    results = json.loads(Path(turns).read_text())["results"]
    times: dict = {}
    for r in results:
        if r["status"] == "ok":
            times.setdefault((Path(r["source"]).stem, r["dtype"]), {})[r["kernel"]] = r["ms"]
    for dtype in ("float32", "float64"):
        ratios = []
        print(f"{dtype}: matrix, auto's kernel, auto ms, lean pair ms, lean / auto")
        for (name, dt), t in sorted(times.items()):
            if dt != dtype:
                continue
            A = spla.CSRMatrix.from_scipy(sp.load_npz(Path(folder) / f"{name}.npz").astype(dtype))
            lean = min(t["cusparse"], t["cusparse:2"])
            ratios.append(lean / t["auto"])
            print(f"  {name:<24} {rule_kernel(A):<10} {t['auto']:8.4f} {lean:8.4f} {ratios[-1]:6.3f}")
        print(f"  geomean {math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f} over {len(ratios)}, "
              f"worst {min(ratios):.3f}")


if __name__ == "__main__":
    main(*sys.argv[1:])
