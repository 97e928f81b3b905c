"""The predictions of sets 23-26 and A1, scored on the next call's results: written in session 28,
before any of them ran, so the test of each prediction is fixed before its data exists.

    python3 verdicts.py DIR        # DIR: the unpacked next.tgz (/tmp/next: held-out-2N.json, a1/, ...)

Each line: the prediction, PASS or FAIL (or MISSING where its results are absent), and the figures
it was judged on. The criteria are those of the lab READMEs, word for word where they give a
number: set 23 (M2) in ../h200-2026-12-05-session26/README.md, sets 24 (S1) and 25 (P2) in
../cpu-2026-12-04-session27/README.md, set 26 (I1) and A1 in this folder's README. All ratios are
of speed (the other kernel's time over the named one's), by device time unless a line says per
call. S1c's "within 10% of today's pick" is read as at least 0.90x its speed (a faster call is no
miss). N5 (Nsight Compute) is read by hand from the ncu logs.
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts"))
from fit_auto import read_records  # noqa: E402  (plain or gzipped records)


def geomean(values) -> float:
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def short(name: str) -> str:
    """A record's matrix: a file's name (without .npz), or the source itself (gen:, corpus:)."""
    return Path(name).name.removesuffix(".npz") if "/" in name else name


def bench(path: Path) -> dict:
    """{(matrix, dtype): {kernel: row}} of a bench_corpus.py result ({} where the file is absent)."""
    if not path.is_file():
        return {}
    out = {}
    for record in read_records(path):
        if record.get("status") == "ok":
            out[short(record["name"]), record["dtype"]] = {r["kernel"]: r for r in record["rows"]
                                                          if r.get("status") == "ok"}
    return out


def speed(runs: dict, matrix: str, dtype: str, over: str, of: str, measure: str = "device_us") -> float | None:
    """How much faster kernel ``of`` ran than kernel ``over`` (None where either is missing)."""
    rows = runs.get((matrix, dtype), {})
    if over not in rows or of not in rows:
        return None
    return rows[over][measure] / rows[of][measure]


def verdict(label: str, ok: bool | None, detail: str) -> None:
    state = "MISSING" if ok is None else ("PASS" if ok else "FAIL")
    print(f"{label:5s} {state:7s} {detail}")


def counted(label: str, ratios: dict, test, need: int, extra: str = "", extra_ok: bool = True) -> bool | None:
    """A prediction of the form 'test(ratio) in at least need of these runs' (plus extra terms)."""
    present = {k: v for k, v in ratios.items() if v is not None}
    if len(present) < len(ratios):
        missing = sorted(k for k, v in ratios.items() if v is None)
        verdict(label, None, f"no result for {len(missing)} of {len(ratios)} runs (the first: {missing[0]})")
        return None
    hits = sum(bool(test(v)) for v in present.values())
    ok = hits >= need and extra_ok
    runs = ", ".join(f"{m} {d[-2:]} {v:.2f}" for (m, d), v in sorted(present.items()))
    verdict(label, ok, f"{hits}/{len(present)} (need {need}){extra}: {runs}")
    return ok


def gated(label: str, ratios: dict, need: int, geomean_at_least: float, lowest_at_least: float) -> bool | None:
    """'at least as fast in at least need of these runs, with a geomean of at least ... and none
    below ...': the form of M2a, S1a, P2a and I1a."""
    values = [v for v in ratios.values() if v is not None]
    g, low = geomean(values), min(values, default=float("nan"))
    return counted(label, ratios, lambda v: v >= 1.0, need,
                   f", geomean {g:.3f} (need {geomean_at_least}), lowest {low:.2f} (need {lowest_at_least})",
                   g >= geomean_at_least and low >= lowest_at_least)


DTYPES = ("float32", "float64")


def set23(runs: dict) -> None:
    gate = ("rows-14-22-local-150", "rows-40-56-local-400", "rows-80-110-local-1000", "rows-24-exactly-local-180")
    long_rows = ("rows-150-210-local-2000", "rows-200-260-local-2500")
    run_rows = ("runs-3x12-local-2000", "runs-6x4-local-5000")
    gated("M2a", {(m, d): speed(runs, m, d, "vector", "staged") for m in gate for d in DTYPES}, 7, 1.08, 0.95)
    counted("M2b", {(m, d): speed(runs, m, d, "staged", "vector") for m in long_rows for d in DTYPES},
            lambda v: v >= 1.0, 3)
    counted("M2c", {(m, d): speed(runs, m, d, "vector", "warp") for m in run_rows for d in DTYPES},
            lambda v: v >= 1.1, 3)


def set24(runs: dict, detection: Path) -> None:
    moved = {"line3-300k": "dia", "line5-180k": "dia", "stencil13-2d-240": "dia", "stencil19-3d-36": "dia",
             "triangular-grid-300": "dia", "flat-box-120x120x5": "dia", "band-20-40k": "band",
             "triangular-band-40-35k": "band"}
    gated("S1a", {(m, d): speed(runs, m, d, "auto", k) for m, k in moved.items() for d in DTYPES}, 14, 1.10, 0.95)

    def structured(m, d):  # the faster structured kernel the record timed on a control
        found = [v for k in ("dia", "band") if (v := speed(runs, m, d, "auto", k)) is not None]
        return max(found) if found else None
    counted("S1b", {(m, d): structured(m, d) for m in ("stencil19-3d-28", "band-24-10k") for d in DTYPES},
            lambda v: v <= 1.05, 3)
    c = {(m, d): speed(runs, m, d, "auto", k, "per_call_us") for m, k in moved.items() for d in DTYPES}
    counted("S1c", c, lambda v: v >= 0.90, len(c), " (per call, each at least 0.90x today's pick)")
    if not detection.is_file():
        verdict("S1d", None, f"no {detection}")
        return
    totals = {}
    for line in detection.read_text().splitlines():
        found = re.match(r"(\S+) \((\w+),.*dia \w+ in ([\d.]+) ms.*band \w+ in ([\d.]+) ms", line)
        if found:
            totals[Path(found[1]).name] = (found[2], float(found[3]) + float(found[4]))
    ok = len(totals) == 4 and all(dev == "gpu" and ms <= 2.0 for dev, ms in totals.values())
    verdict("S1d", ok if totals else None,
            "dia + band detection (need <= 2 ms each, on the gpu): "
            + ", ".join(f"{m} {ms:.2f} ms ({dev})" for m, (dev, ms) in totals.items()))


def set25(runs: dict) -> None:
    varying = ("rows-5-15-over-3M", "rows-24-56-over-1500k", "rows-4-or-20-over-2M", "rows-8-24-local-30000",
               "rows-30-60-local-12000")
    controls = ("knn-24-window-12k", "rows-16-exactly-over-5M", "rows-40-exactly-local-10000")
    a = {(m, "float32"): speed(runs, m, "float32", "segmented", "staged") for m in varying}
    gated("P2a", a, 4, 1.05, 0.90)
    counted("P2b", {(m, "float32"): speed(runs, m, "float32", "staged", "segmented") for m in controls},
            lambda v: v >= 0.97, 2)
    counted("P2c", {(m, "float32"): speed(runs, m, "float32", "segmented", "staged") for m in varying[3:]},
            lambda v: v >= 0.90, 2)
    scattered = {k: v for k, v in a.items() if k[0] in varying[:3]}
    counted("P2a'", scattered, lambda v: v >= 1.0, 3, " (P2a on the three scattered ones: the fallback if P2c fails)")


def set26(runs: dict) -> None:
    movers = ("pareto-2-12k", "lognormal-2.6-10k", "lognormal-2-1.2-16k", "lognormal-empty-26k", "rmat-14-12-flat",
              "cut-probe-high-30k", "gen:rmat:15:8:seed=44")
    controls = ("pareto-1.5-30k", "pareto-2.2-20k", "preferential-18k-6", "cut-probe-low-30k", "vsp-like-30k",
                "short-and-300s-40k")
    gated("I1a", {(m, d): speed(runs, m, d, "adaptive2", "staged") for m in movers for d in DTYPES}, 11, 1.08, 0.93)
    counted("I1b", {(m, d): speed(runs, m, d, "staged", "adaptive2") for m in controls for d in DTYPES},
            lambda v: v >= 0.97, 8)
    c = {(m, d): speed(runs, m, d, "adaptive2", "staged", "per_call_us") for m in movers for d in DTYPES}
    counted("I1c", c, lambda v: v >= 0.90, len(c), " (per call, each at least 0.90x adaptive2)")


def a1(path: Path) -> None:
    if not path.is_file():
        for label in ("A1a", "A1b", "A1c", "A1d"):
            verdict(label, None, f"no {path}")
        return
    results = json.loads(path.read_text())["results"]
    t = {}
    for r in results:
        rows = {k["kernel"]: k["device_us"] for k in r["kernels"] if k.get("status") == "ok"}
        t[short(r["source"]), r["dtype"]] = (r, rows)

    def ratio(key, over, of):
        rows = t[key][1]
        return rows[over] / rows[of] if over in rows and of in rows else None

    small = {k: ratio(k, "adaptive2", "adaptive2:wm512") for k, (r, _) in t.items()
             if r["descriptors"] <= 1200 and r["rows_513_1024"] > 0}
    values = [v for v in small.values() if v is not None]
    g = geomean(values)
    counted("A1a", small, lambda v: v >= 1.0, math.ceil(0.75 * len(small)), f", geomean {g:.3f} (need 1.05)",
            g >= 1.05)
    two = ("vsp_befref_fxm_2_4_air02.mtx.gz", "gen:blockdense:60000:10:800:0.7:seed=80",
           "gen:blockdense:100000:50:1000:0.9:seed=40", "corpus:multimodal:3e5", "vsp-like-30k", "cut-probe-low-30k",
           "cut-probe-high-30k")
    pairs = {(m, d): ratio((m, d), "adaptive2", "adaptive2:wm512") for m in two for d in DTYPES if (m, d) in t}
    near = [v for m in two for d in DTYPES if (m, d) in t and (v := ratio((m, d), "adaptive", "adaptive2:wm512"))]
    g2, g_near = geomean([v for v in pairs.values() if v]), geomean(near)
    verdict("A1a'", g2 >= 1.15 and g_near >= 0.95 if pairs else None,
            f"two-population runs: wm512 over the default {g2:.3f} (need 1.15), adaptive's speed over wm512's "
            f"geomean {1 / g_near:.3f} (need at most 1.05): "
            + ", ".join(f"{m} {d[-2:]} {v:.2f}" for (m, d), v in sorted(pairs.items()) if v))
    counted("A1b", {(m, d): ratio((m, d), "adaptive2:wm512", "adaptive2")
                    for m in ("corpus:multimodal:2e6", "corpus:multimodal:3e6") for d in DTYPES},
            lambda v: v >= 1.03, 3, " (wm512 at least 3% slower)")
    same = {k: ratio(k, "adaptive2", "adaptive2:wm512") for k, (r, _) in t.items() if r["rows_513_1024"] == 0}
    counted("A1c", same, lambda v: abs(v - 1) <= 0.03, max(len(same) - 1, 0),
            " (the same plan: within 3%, all but one)")
    # the cut for SMALL_PLAN_BLOCKS: the geometric midpoint between the largest plan where wm512 won
    # (its geomean over the dtypes at least 1) and the smallest larger plan where it lost
    by_plan = {}
    for (m, d), (r, _) in t.items():
        if r["rows_513_1024"] > 0 and (v := ratio((m, d), "adaptive2", "adaptive2:wm512")) is not None:
            by_plan.setdefault(m, (r["descriptors"], []))[1].append(v)
    plans = sorted((desc, geomean(vs), m) for m, (desc, vs) in by_plan.items())
    won = [desc for desc, g, _ in plans if g >= 1.0]
    lost = [desc for desc, g, _ in plans if g < 1.0 and won and desc > max(won)]
    cut = f"{math.sqrt(max(won) * min(lost)):.0f}" if won and lost else "none (no loss above the wins)"
    print(f"A1 cut  SMALL_PLAN_BLOCKS from the run: {cut}; plans (descriptors, wm512 over the default): "
          + ", ".join(f"{m} {desc} {g:.2f}" for desc, g, m in plans))
    counted("A1d", {(m, d): ratio((m, d), "adaptive2:wm0", "adaptive2")
                    for m in ("ca-HepPh.mtx.gz", "corpus:empty-rows:1e6", "corpus:powerlaw-heavy:1e6") for d in DTYPES},
            lambda v: v >= 1.03, 4, " (wm0 at least 3% slower)")


def main(argv) -> int:
    if len(argv) != 1:
        print(__doc__)
        return 2
    folder = Path(argv[0])
    set23(bench(folder / "held-out-23.json"))
    set24(bench(folder / "held-out-24.json"), folder / "detection.log")
    set25(bench(folder / "held-out-25.json"))
    set26(bench(folder / "held-out-26.json"))
    a1(folder / "a1" / "rows_path.json")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
