"""Session 66: SpMM's short-rows rule at small k, fitted over the tuner's timings of every candidate, host only.

Fit data: session 64's timings (k = 8 and 32; features from session 65's features.json) and set 69 (session 65's
call 2, k = 4-32). Held out from the first fit (call 1, run after regk to k = 4 and dia from 6,000 rows were
committed): the two grids of random rows of exactly m nonzeros (k = 2-8) and fresh sets 70 and 71. regk's row
floor (REGK_MIN_ROWS) was then fitted on call 1's sets, so for it they are fit data too; fresh set 72 (call 3,
k = 2 and 4) checks it.

A pick counts as "within 15%" where the fastest candidate's device time is at least 1/1.15 of the pick's; fused
reads as the library runs it (segments of 256 under 2^22 nonzeros), as in session 65's small_rule.py.

    PYTHONPATH=. python3 docs/lab/gpu-2026-12-07-session66/fit_short.py
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path

from spla.bench import corpus
from spla.io import generators
from spla.planning import spmm as P

HERE = Path(__file__).resolve().parent
S65 = HERE.parent / "gpu-2026-12-07-session65"
sys.path.insert(0, str(S65))
import small_rule  # noqa: E402  (session 65's reader of tuned_spmm.json)
from features import stats  # noqa: E402

CALL1 = HERE / "results" / "call1" / "c1"
SET72 = HERE / "results" / "call3" / "c3" / "set72"  # call 3: fresh set 72, regk's row floor checked
CACHE = Path(os.environ.get("CACHE", "/tmp/fit_short_features.json"))


def corpus_runs(folder: Path, seed: int, set_name: str) -> list[dict]:
    """Every run of a tuned_spmm.py set (one subfolder per size), its matrices' features rebuilt (cached)."""
    cache = json.loads(CACHE.read_text()) if CACHE.exists() else {}
    out = []
    for size in sorted(p.name for p in folder.iterdir() if (p / "tuned_spmm.json").exists()):
        records = json.loads((folder / size / "tuned_spmm.json").read_text())["records"]
        features = {}
        for m in sorted({r["matrix"] for r in records}):
            key = f"{set_name}/{size}/{m}"
            if key not in cache:  # a corpus family at the folder's size, or a generator spec (SPECS=)
                cache[key] = stats(generators.from_spec(m) if m.startswith("gen:")
                                   else corpus.build(m, int(float(size)), seed=seed))
            features[f"{set_name}/{m}"] = cache[key]
        out += [{**r, "size": size} for r in small_rule.runs(records, features, set_name)]
    CACHE.write_text(json.dumps(cache))
    return out


def grid_runs(path: Path, set_name: str) -> list[dict]:
    out = []
    for r in json.loads(path.read_text())["records"]:
        times = {k: v for k, v in r["us"].items() if v}
        out.append({"set": set_name, "half": "fit", "matrix": f"random:{r['n_rows']}:{r['length']}",
                    "dtype": r["dtype"], "k": r["k"], "times": times, "rule_then": r["rule"], "n_rows": r["n_rows"],
                    "mean": float(r["length"]), "longest": r["length"], "cv": 0.0, "dia_applies": False,
                    "nnz": r["n_rows"] * r["length"]})
    return out


def session64_runs() -> list[dict]:
    features = json.loads((S65 / "features.json").read_text())
    return [r for name, folder in small_rule.SETS.items()
            for r in small_rule.runs(json.loads((small_rule.RUNS / folder / "tuned_spmm.json").read_text())["records"],
                                     features, name)]


DIA_MIN_ROWS = 6000  # the library's dia floor as session 66 left it (session 67: DIA_ROWS_PER_MEAN x mean rows)


def pick(r, regk_small_k: int | None = None, dia_min_rows: float = DIA_MIN_ROWS,
         regk_min_rows: int | None = None) -> str:
    """The library's rule (rule_kernel) as session 66 left it, on a run's features; regk_small_k and regk_min_rows
    replace REGK_SMALL_K and REGK_MIN_ROWS (regk_small_k 0: session 65's rule, warp under subwarp's thread cut),
    dia_min_rows DIA_MIN_ROWS (session 65's: 4,500)."""
    k, dtype, n_rows = r["k"], r["dtype"], r["n_rows"]
    if 1 < k <= P.DIA_MAX_K and r["dia_applies"] and n_rows >= dia_min_rows:
        return "dia"
    kept = P.REGK_SMALL_K, P.REGK_MIN_ROWS
    P.REGK_SMALL_K = kept[0] if regk_small_k is None else regk_small_k
    P.REGK_MIN_ROWS = kept[1] if regk_min_rows is None else regk_min_rows
    try:
        return P.choose_from_stats(r["mean"], r["longest"], k, dtype, n_rows)
    finally:
        P.REGK_SMALL_K, P.REGK_MIN_ROWS = kept



def library_pick(r) -> str:
    """The library's rule as session 67 left it: dia from DIA_ROWS_PER_MEAN rows a nonzero of the mean row (session
    68's regk on long diagonal rows at k <= 4 is not here: session 68's fresh_bands.py adds it as `exception`)."""
    return pick(r, dia_min_rows=P.DIA_ROWS_PER_MEAN * r["mean"])


NEAR = 1 / 1.15  # "within 15% of the best": the fastest candidate's time over the pick's


def near(r, kernel: str) -> bool:
    return min(r["times"].values()) / r["times"][kernel] >= NEAR


def geomean(xs) -> float:
    return math.exp(sum(math.log(max(x, 1e-9)) for x in xs) / len(xs)) if xs else math.nan


def score(rs, rule) -> tuple[int, int, float]:
    """(runs whose pick by rule is within 15% of the best, runs, geomean best/pick); a pick never timed scores 0."""
    ratios = [min(r["times"].values()) / r["times"].get(rule(r), math.inf) for r in rs]
    return sum(x >= NEAR for x in ratios), len(ratios), geomean(ratios)


def show(groups: dict, rules: dict) -> None:
    for label, rule in rules.items():
        cells = []
        for g, rs in groups.items():
            hit, n, gm = score(rs, rule)
            cells.append(f"{g} {hit}/{n} ({gm:.3f})")
        print(f"{label:34s} " + "; ".join(cells))


def main() -> None:
    s64 = session64_runs()
    s69 = corpus_runs(S65 / "results" / "call2" / "c2", 11, "69")
    small_k = lambda rs: [r for r in rs if r["k"] <= P.REGK_MAX_K]  # noqa: E731
    groups = {"s64 k<=16": small_k(s64), "s69 k<=16": small_k(s69)}
    rules = {"session 65": lambda r: pick(r, 0, 4500), "dia from 6,000": lambda r: pick(r, 0),
             "+ regk to k = 4 (call 1)": lambda r: pick(r, regk_min_rows=0),
             f"+ regk from {P.REGK_MIN_ROWS} rows (library)": pick}
    for kk in (2, 8):
        rules[f"library, regk to k = {kk}"] = lambda r, kk=kk: pick(r, kk)
    for rows in (3000, 4500, 8000, 12000):
        rules[f"library, regk from {rows} rows"] = lambda r, rows=rows: pick(r, regk_min_rows=rows)
    show(groups, rules)
    if not CALL1.exists():
        return
    grids = {"grid": grid_runs(CALL1 / "grid" / "grid_short.json", "grid"),
             "grid 2": grid_runs(CALL1 / "held" / "grid_short.json", "grid 2")}
    held = {**grids, "both grids": grids["grid"] + grids["grid 2"],
            "set 70": small_k(corpus_runs(CALL1 / "set70", 17, "70")),
            "set 71": small_k(corpus_runs(CALL1 / "set71", 19, "71"))}
    print("\nheld out (call 1):")
    show(held, rules)
    if SET72.exists():
        print("\nfresh set 72 (call 3, after regk's row floor was committed):")
        show({"set 72": corpus_runs(SET72, 23, "72")}, rules)


if __name__ == "__main__":
    main()
