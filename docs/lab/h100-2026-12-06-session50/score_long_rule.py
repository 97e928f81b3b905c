"""The long class's few-rows path as committed (L1 + L2 + G), scored on short-wide sets 53-56 from their turns:
each run's pick (vector where the rule now says "long", else auto's kernel in that run: staged on these) over the
best spla kernel timed, and over the pick of the rule before session 50 (vector only from long_rows rows).

    PYTHONPATH=. python3 score_long_rule.py TURNS.json NPZ_DIR [TURNS.json NPZ_DIR ...]
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import scipy.sparse as sp

import spla
from spla.planning.spmv import AUTO, describe_choice

SPLA = ("vector", "warp:32", "staged", "adaptive2", "segmented", "scalar", "warp", "dia", "band", "rle")


def main(args) -> None:
    quality, gain = [], []
    for turns, folder in zip(args[::2], args[1::2]):
        times: dict = {}
        for r in json.loads(Path(turns).read_text())["results"]:
            if r["status"] == "ok":
                times.setdefault((Path(r["source"]).stem, r["dtype"]), {})[r["kernel"]] = r["ms"]
        for (name, dtype), t in sorted(times.items()):
            if "wide" not in name:
                continue
            A = spla.CSRMatrix.from_scipy(sp.load_npz(Path(folder) / f"{name}.npz").astype(dtype))
            klass = describe_choice(A)["class"]
            pick = t["vector"] if klass == "long" else t["staged"]
            before = t["vector"] if klass == "long" and A.n_rows >= AUTO.long_rows else t["staged"]
            best = min(v for k, v in t.items() if k in SPLA)
            quality.append(best / pick)
            gain.append(before / pick)
            print(f"{name:<34} {dtype:<8} {klass:<16} best/pick {quality[-1]:.3f}  over before {gain[-1]:.3f}")
    moved = [g for g in gain if g != 1.0]
    print(f"within 15% of the best: {sum(q >= 0.85 for q in quality)}/{len(quality)}, worst {min(quality):.3f}; "
          f"where it moves a run ({len(moved)}): {math.exp(sum(map(math.log, moved)) / len(moved)):.3f}x the rule "
          f"before, worst {min(moved):.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
