"""Session 65: SpMM's rule replayed over the SpMM tuner's timings of every candidate, host only.

Reads session 64's tuned_spmm.json (calls 2-6) with this folder's features.json (features.py), and with SET69=DIR
the fresh set 69 of call 2 (its features rebuilt here). fused's timings are read as segments of 256 wherever the
library now runs them (matrices under 2^22 nonzeros with a row longer than 256). A pick counts as "within 15%"
where the fastest candidate's device time is at least 1/1.15 of the pick's.

    PYTHONPATH=. python3 docs/lab/gpu-2026-12-07-session65/small_rule.py [SET69=DIR]
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from pathlib import Path

from spla.bench import corpus
from spla.planning import spmm as P

DIA_MIN_ROWS = 4500  # the library's dia floor when this ran (session 67 replaced it by rows over the mean)

HERE = Path(__file__).resolve().parent
RUNS = HERE.parent / "gpu-2026-12-07-session64" / "results"
SETS = {"real": "call4/c4", "1e5": "call5/c5/1e5", "3e5": "call5/c5/3e5", "2e5": "call6/c6/2e5",
        "6e5": "call6/c6/6e5", "4M": "call2/c2", "4M-k32": "call3/c3"}


def runs(records, features, set_name: str) -> list[dict]:
    names = sorted({r["matrix"] for r in records})
    out = []
    for r in records:
        times = {k: v for k, v in r["tuner_us"].items() if v}
        f = features[f"{set_name}/{r['matrix']}"]
        if f["longest"] > 256 and "fused:256" in times and f["nnz"] < P.SHORT_SEGMENTS_MAX_NNZ:
            times["fused:1024"] = times["fused"]
            times["fused"] = times.pop("fused:256")
        times.pop("fused:256", None)
        half = (("fit", "report")[names.index(r["matrix"]) % 2] if set_name == "real"
                else corpus.FAMILIES[r["matrix"]].half if r["matrix"] in corpus.FAMILIES else "spec")
        out.append({**f, "set": set_name, "half": half, "matrix": r["matrix"], "dtype": r["dtype"], "k": r["k"],
                    "times": times, "rule_then": r["rule"]})
    return out


def rule(r, dia_where: str = "applies", dia_min_rows: int = DIA_MIN_ROWS) -> str:
    """The rule's pick: dia "spmv" (session 64: where auto's SpMV runs dia) or "applies" (session 65)."""
    k = r["k"]
    dia_ok = r["dia_k"] if dia_where == "spmv" else r["dia_applies"] and r["n_rows"] >= dia_min_rows
    if 1 < k <= P.DIA_MAX_K and dia_ok:
        return "dia"
    return P.choose_from_stats(r["mean"], r["longest"], k, r["dtype"], r["n_rows"])


def score(rs, pick) -> str:
    ratios = [min(r["times"].values()) / r["times"][pick(r)] for r in rs if pick(r) in r["times"]]
    if not ratios:
        return "-"
    geomean = math.exp(sum(map(math.log, ratios)) / len(ratios))
    return f"{sum(x >= 1 / 1.15 for x in ratios)}/{len(ratios)} ({geomean:.3f})"


def replay(groups: dict) -> None:
    for label, pick in [("session 64 (dia where the SpMV runs it)", lambda r: rule(r, "spmv")),
                        ("dia where it applies, no floor", lambda r: rule(r, dia_min_rows=0)),
                        (f"dia where it applies, from {DIA_MIN_ROWS} rows", rule)]:
        print(f"{label}: " + "; ".join(f"{g} {score(rs, pick)}" for g, rs in groups.items()))


def main() -> None:
    features = json.loads((HERE / "features.json").read_text())
    rows = [r for name, folder in SETS.items()
            for r in runs(json.loads((RUNS / folder / "tuned_spmm.json").read_text())["records"], features, name)]
    small = [r for r in rows if not r["set"].startswith("4M")]
    groups = {"fit <1M": [r for r in small if r["half"] == "fit"],
              "report <1M": [r for r in small if r["half"] == "report"],
              "fit 4M": [r for r in rows if r["set"].startswith("4M") and r["half"] == "fit"],
              "report 4M": [r for r in rows if r["set"].startswith("4M") and r["half"] == "report"]}
    print("within 15% of the best candidate (geomean best/pick), session 64's timings:")
    replay(groups)
    print("\ndia against warp on the fit half's moved runs (rows, best/dia, best/rule then):")
    for r in sorted(groups["fit <1M"], key=lambda r: r["n_rows"]):
        if rule(r, dia_min_rows=0) == "dia" != rule(r, "spmv"):
            best = min(r["times"].values())
            print(f"  {r['set']} {r['matrix']} {r['dtype']} k={r['k']}: {r['n_rows']} rows, "
                  f"{best / r['times']['dia']:.2f} / {best / r['times'][rule(r, 'spmv')]:.2f}")
    if os.environ.get("SET69"):
        fresh(Path(os.environ["SET69"]))


def fresh(folder: Path) -> None:
    """Fresh set 69 (call 2): the rule now in the library (each record's own "rule") against session 64's."""
    from features import stats  # this folder's

    print("\nfresh set 69 (call 2):")
    for size in sorted(p.name for p in folder.iterdir() if (p / "tuned_spmm.json").exists()):
        records = json.loads((folder / size / "tuned_spmm.json").read_text())["records"]
        features = {f"69/{m}": stats(corpus.build(m, int(float(size)), seed=11))
                    for m in sorted({r["matrix"] for r in records})}
        rs = runs(records, features, "69")
        assert all(r["rule_then"] == rule(r) for r in rs), "the replayed rule is the library's"
        moved = [r for r in rs if rule(r) != rule(r, "spmv")]
        print(f"{size}: {len(rs)} runs; every run: now {score(rs, rule)}, session 64 "
              f"{score(rs, lambda r: rule(r, 'spmv'))}; the {len(moved)} moved: now {score(moved, rule)}, "
              f"session 64 {score(moved, lambda r: rule(r, 'spmv'))}")
        misses = Counter((r["matrix"], r["k"]) for r in moved
                         if min(r["times"].values()) / r["times"][rule(r)] < 1 / 1.15)
        print(f"  moved runs where dia missed 15%: {dict(misses) or 'none'}")
        long_fused = [r for r in rs if rule(r) == "fused" and "fused:1024" in r["times"]]
        near = sum(r["times"]["fused"] <= 1.05 * min(r["times"]["fused"], r["times"]["fused:1024"])
                   for r in long_fused)
        print(f"  fused's default segments (256) within 5% of the faster length: {near}/{len(long_fused)}")


if __name__ == "__main__":
    main()
