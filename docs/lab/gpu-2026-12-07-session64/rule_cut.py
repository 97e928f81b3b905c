"""Session 64: SpMM's short-rows cut (subwarp only from T threads, n_rows x its lanes a row) read from the
tuner's timings of every candidate in calls 2-6 (tuned_spmm.json), host only.

A pick counts as "within 15%" where the fastest candidate's device time is at least 1/1.15 of the pick's.
Prints the grid of (T, mean-length floor) over each set, then the checks on fresh set 68 (call 6).

    python3 docs/lab/gpu-2026-12-07-session64/rule_cut.py
"""

from __future__ import annotations

import json
import math
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def lanes(k: int, dtype: str) -> int:
    """subwarp's lanes a row (spla.planning.spmm.warp_shape's CL for k <= 128)."""
    vectors = math.ceil(k / (4 if dtype == "float32" else 2))
    return 1 << (vectors - 1).bit_length()


def threads(r) -> int:
    return r["shape"][0] * lanes(r["k"], r["dtype"])


def load(call: str, sub: str = "") -> list:
    folder = RESULTS / call / call.replace("call", "c") / sub
    return json.loads((folder / "tuned_spmm.json").read_text())["records"]


def score(records, pick) -> str:
    ratios = []
    for r in records:
        times = {k: v for k, v in r["tuner_us"].items() if v}
        chosen = pick(r)
        if chosen in times:
            ratios.append(min(times.values()) / times[chosen])
    if not ratios:
        return "-"
    within = sum(x >= 1 / 1.15 for x in ratios)
    return f"{within}/{len(ratios)} ({math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f})"


def main() -> None:
    real = load("call4")
    names = sorted({r["matrix"] for r in real})
    half = {n: ("fit" if i % 2 == 0 else "report") for i, n in enumerate(names)}
    # the runs the rule of calls 2-5 (no cut) sent to subwarp
    sets = {"real fit": [r for r in real if half[r["matrix"]] == "fit"],
            "real report": [r for r in real if half[r["matrix"]] == "report"],
            "corpus 100K": load("call5", "1e5"), "corpus 300K": load("call5", "3e5"), "corpus 4M": load("call2")}
    sets = {name: [r for r in rs if r["rule"] == "subwarp"] for name, rs in sets.items()}
    print("runs the old rule sent to subwarp: within 15% of the best (geomean best/pick)")
    print("old rule:", {name: score(rs, lambda r: "subwarp") for name, rs in sets.items()})
    for cut in (2**13, 2**14, 2**15, 2**16, 2**17):
        for floor in (0, 8, 12):
            def pick(r, cut=cut, floor=floor):
                short = threads(r) < cut and r["nnz"] / r["shape"][0] > floor
                return "warp" if short else "subwarp"
            print(f"T 2^{cut.bit_length() - 1} floor {floor}:", {name: score(rs, pick) for name, rs in sets.items()})
    print("\nfresh set 68 (call 6, the library's cut of 2^16 in place):")
    for size in ("2e5", "6e5"):
        records = load("call6", size)
        # where the cut moved the pick: short rows (mean <= 64, not skewed) under 2^16 threads
        moved = [r for r in records if r["rule"] == "warp" and r["nnz"] / r["shape"][0] <= 64 and threads(r) < 2**16]
        print(f"{size}: {len(moved)} runs moved; old pick (subwarp) {score(moved, lambda r: 'subwarp')}, "
              f"new (warp) {score(moved, lambda r: 'warp')}; every run: old rule "
              f"{score(records, lambda r: 'subwarp' if r in moved else r['rule'])}, new "
              f"{score(records, lambda r: r['rule'])}")


if __name__ == "__main__":
    main()
