"""Session 64: fused's default segment length by matrix size, read from the SpMM tuner's timings of fused
(1,024) and fused:256 wherever auto ran fused (calls 2-6, tuned_spmm.json), host only; plus session 63's
8M-nonzero runs (fused and fused-s256, its call 3).

A choice counts as "within 5%" where the faster of the two is at least 0.95 of the chosen one's device time.
Fit: the real matrices' fit half (name order, even positions), the corpus at 100K, the corpus's fit half at
4M. Report: everything else.

    python3 docs/lab/gpu-2026-12-07-session64/segments.py [SESSION63_SCHEDULES_JSON]
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from spla.bench import corpus  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
HALF = {name: family.half for name, family in corpus.FAMILIES.items()}


def load(path: str) -> list:
    return json.loads((RESULTS / path / "tuned_spmm.json").read_text())["records"]


def score(records, short) -> str:
    ratios = []
    for r in records:
        t = r["tuner_us"]
        if r["rule"] == "fused" and t.get("fused") and t.get("fused:256"):
            ratios.append(min(t["fused"], t["fused:256"]) / t["fused:256" if short(r) else "fused"])
    if not ratios:
        return "-"
    return f"{sum(x >= 0.95 for x in ratios)}/{len(ratios)} ({math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f})"


def main() -> None:
    real = load("call4/c4")
    names = sorted({r["matrix"] for r in real})
    real_half = {n: ("fit" if i % 2 == 0 else "report") for i, n in enumerate(names)}
    large = load("call2/c2") + load("call3/c3")
    sets = {"fit": [r for r in real if real_half[r["matrix"]] == "fit"] + load("call5/c5/1e5")
            + [r for r in large if HALF[r["matrix"]] == "fit"],
            "real report": [r for r in real if real_half[r["matrix"]] == "report"],
            "corpus 300K": load("call5/c5/3e5"), "set 68 200K": load("call6/c6/2e5"),
            "set 68 600K": load("call6/c6/6e5"), "corpus 4M report": [r for r in large if HALF[r["matrix"]] == "report"]}
    rules = {"always 1,024": lambda r: False, "always 256": lambda r: True, "256 past k = 16": lambda r: r["k"] > 16}
    for bits in (19, 20, 21, 22):
        rules[f"256 under 2^{bits} nnz"] = lambda r, bits=bits: r["nnz"] < 2**bits
    print("runs auto sent to fused: the choice within 5% of the faster length (geomean faster/choice)")
    for label, short in rules.items():
        print(f"{label:20}", " | ".join(f"{name} {score(rs, short)}" for name, rs in sets.items()))
    if len(sys.argv) > 1:  # session 63, 8M nonzeros: docs/lab/gpu-2026-12-07-session63/results/call3/segments.tgz
        records = json.loads(Path(sys.argv[1]).read_text())["records"]
        for r in records:
            r["rule"], r["tuner_us"] = "fused", {"fused": r["device_us"]["fused"],
                                                 "fused:256": r["device_us"]["fused-s256"]}
        for label in ("always 1,024", "256 past k = 16", "256 under 2^20 nnz"):
            print("session 63 at 8M,", label, {half: score([r for r in records if r["half"] == half], rules[label])
                                               for half in ("fit", "report")})


if __name__ == "__main__":
    main()
