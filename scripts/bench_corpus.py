#!/usr/bin/env python
"""SpMV over the public corpus (spla.bench.corpus) and real matrices, beside the lean cuSPARSE call.

For every family at every ``--scale`` (nnz targets) and every dtype, one run
of :func:`spla.bench.spmv.compare`: each kernel checked against a float64
SciPy product, then timed per call from Python (``out=`` preallocated) and by
device time, in round-robin rounds beside both cuSPARSE CSR algorithms (the
faster is the anchor). Kernels: ``auto`` (the rule: the tuning cache is off in
this script, so auto never sees earlier tunings), ``tune`` (auto after
``spla.tune``) and every spla kernel at its default parameter (``dia`` and
``band`` where the matrix has their structure), for the best spla kernel per
matrix. Writes ``PREFIX.json`` (every figure, the GPU,
versions, the command) and ``PREFIX.md`` (a table per matrix and geomeans
split by the corpus halves: ``fit`` families are where rules are fitted,
``report`` families and ``real`` matrices are held out; ``--sources`` adds
matrices outside the corpus, as the ``held-out`` half, which no fit reads).

    PYTHONPATH=. python scripts/bench_corpus.py --out $OUT/corpus                    # ~6 min on an H200
    PYTHONPATH=. python scripts/bench_corpus.py --scale 1e6 --budget-min 2 --out /tmp/c
    PYTHONPATH=. python scripts/bench_corpus.py --real ../shared/matrices --out /tmp/c
    PYTHONPATH=. python scripts/bench_corpus.py --scale none --sources gen:rmat:18:8:seed=5 --out /tmp/c

``--budget-min`` bounds the whole run: no matrix is started once it is spent
(the rest are listed as skipped), so order matters: scales ascending, then
families in table order, both dtypes of a matrix together. Both files are
rewritten after every matrix, so a run stopped from outside (a timeout, ^C)
keeps what it measured; ``"finished": false`` (and a line in the table) says
it did not end.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path

# auto must be the rule here, and tuning must not leave files behind
os.environ["SPLA_TUNE_CACHE"] = "off"

from spla.bench import corpus  # noqa: E402
from spla.bench.timing import geomean  # noqa: E402
from spla.planning.spmv import SPLA_KERNELS, STRUCTURED_KERNELS, STRUCTURES  # noqa: E402

DTYPES = ("float32", "float64")
KERNELS = ("auto", "tune", *SPLA_KERNELS)
HALF_ORDER = ("fit", "report", "real", "held-out")


def nnz_list(text: str) -> list[int]:
    """``"1e6,2e7"`` -> [1000000, 20000000] (ascending); ``"none"`` -> [] (no corpus families)."""
    if text.strip().lower() == "none":
        return []
    try:
        values = sorted({int(float(v)) for v in text.split(",") if v.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"--scale takes nnz targets like 1e6,3e7, got {text!r}") from None
    if not values or values[0] < corpus.MIN_NNZ:
        raise argparse.ArgumentTypeError(f"--scale needs targets of at least {corpus.MIN_NNZ} nnz, got {text!r}")
    return values


def name_list(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in corpus.FAMILIES]
    if not names or unknown:
        raise argparse.ArgumentTypeError(f"unknown families {unknown or text!r}; "
                                         f"choose from {', '.join(corpus.FAMILIES)}")
    return names


def dtype_list(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names or any(n not in DTYPES for n in names):
        raise argparse.ArgumentTypeError(f"--dtypes takes float32 and/or float64, got {text!r}")
    return names


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="output prefix: writes PREFIX.json and PREFIX.md")
    parser.add_argument("--scale", type=nnz_list, default=nnz_list("2e6,4e7"),
                        help="nnz targets, comma-separated (default 2e6,4e7), or none")
    parser.add_argument("--families", type=name_list, default=None, help="a comma-separated subset of families")
    parser.add_argument("--half", choices=("fit", "report", "all"), default="all")
    parser.add_argument("--dtypes", type=dtype_list, default=list(DTYPES))
    parser.add_argument("--real", type=Path, default=None, help="also every .mtx/.mtx.gz in this folder")
    parser.add_argument("--sources", type=lambda text: [v for v in text.split(",") if v.strip()], default=[],
                        help="also these matrices (files or gen: specs, comma-separated), as the held-out half")
    parser.add_argument("--rounds", type=int, default=3, help="round-robin rounds per matrix (default 3)")
    parser.add_argument("--kernel-budget-ms", type=float, default=15.0,
                        help="time per kernel per round and figure (default 15 ms)")
    parser.add_argument("--budget-min", type=float, default=6.0,
                        help="start no matrix after this many minutes (default 6)")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.kernel_budget_ms <= 0 or args.budget_min <= 0:
        parser.error("--rounds, --kernel-budget-ms and --budget-min must be positive")
    if args.real is not None and not args.real.is_dir():
        parser.error(f"--real {args.real}: not a folder")
    return args


def _count(n: int) -> str:
    """2000000 -> "2M", 2500000 -> "2.5M"."""
    for size, suffix in ((10**9, "G"), (10**6, "M"), (10**3, "k")):
        if n >= size:
            return f"{n / size:g}{suffix}"
    return str(n)


def jobs(args) -> list[dict]:
    """What to run, in order: (matrix source, half, nnz target) before dtypes."""
    names = args.families or corpus.families(None if args.half == "all" else args.half)
    out = [{"name": f"{n}@{_count(target)}", "family": n,
            "half": corpus.FAMILIES[n].half, "nnz_target": target}
           for target in args.scale for n in names]
    if args.real is not None:
        files = sorted(p for p in args.real.iterdir() if p.name.endswith((".mtx", ".mtx.gz")))
        out += [{"name": p.name.split(".mtx")[0], "path": str(p), "half": "real"} for p in files]
    out += [{"name": source, "path": source, "half": "held-out"} for source in args.sources]
    return out


# -------------------------------------------------------------- summarising
def _row(record: dict, kernel: str) -> dict | None:
    for row in record.get("rows", ()):
        if row["kernel"] == kernel and "speedup" in row:
            return row
    return None


def summarize(record: dict) -> dict:
    """auto, tuned auto and the best spla kernel of one compare() record, beside the anchor."""
    out: dict = {}
    for label, kernel in (("auto", "auto"), ("tuned", "tune")):
        row = _row(record, kernel)
        if row is not None:
            out[label] = {"kernel": record.get(f"{label}_kernel", kernel), "per_call": row["speedup"],
                          "device": row["device_speedup"]}
    spla_rows = [r for r in (_row(record, k) for k in (*SPLA_KERNELS, *STRUCTURED_KERNELS)) if r is not None]
    if spla_rows:
        best = max(spla_rows, key=lambda r: r["device_speedup"])
        out["best"] = {"kernel": best["kernel"], "per_call": best["speedup"], "device": best["device_speedup"]}
    return out


def geomeans(records: list[dict]) -> list[dict]:
    """Geomeans of the speed-ups per (half, dtype): auto, tuned and best, per call and by device time."""
    groups: dict[tuple, list] = {}
    for record in records:
        if record.get("status") == "ok":
            groups.setdefault((record["half"], record["dtype"]), []).append(summarize(record))
    table = []
    for half in HALF_ORDER:
        for dtype in DTYPES:
            items = groups.get((half, dtype))
            if not items:
                continue
            entry = {"half": half, "dtype": dtype, "matrices": len(items)}
            for label in ("auto", "tuned", "best"):
                for figure in ("per_call", "device"):
                    entry[f"{label}_{figure}"] = geomean(s[label][figure] for s in items if label in s)
            entry["auto_worst_device"] = min((s["auto"]["device"] for s in items if "auto" in s), default=float("nan"))
            table.append(entry)
    return table


def _x(value) -> str:
    return "-" if value is None or value != value else f"{value:.2f}x"


def markdown(result: dict) -> str:
    """The run as markdown: how it ran, geomeans by half, then one line per (matrix, dtype)."""
    env = result.get("environment", {})
    lines = [f"SpMV over the spla corpus on {env.get('gpu', '?')} ({env.get('date', '?')}): speed-ups vs the "
             "lean cuSPARSE call (the faster of CSR_ALG1/ALG2), per call from Python with out= preallocated and "
             "by device time; auto = the rule (no tuning cache), tuned = kernel='tune'. "
             f"Command: `{env.get('command', '?')}`", "",
             "| half | dtype | matrices | auto per call | auto device | auto worst device | tuned per call | "
             "tuned device | best spla device |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for g in result["geomeans"]:
        lines.append(f"| {g['half']} | {g['dtype']} | {g['matrices']} | {_x(g['auto_per_call'])} | "
                     f"{_x(g['auto_device'])} | {_x(g['auto_worst_device'])} | {_x(g['tuned_per_call'])} | "
                     f"{_x(g['tuned_device'])} | {_x(g['best_device'])} |")
    lines += ["", "| matrix | half | dtype | rows x cols | nnz | auto | per call | device | tuned | per call | "
              "device | best spla | device |",
              "| --- | --- | --- | --- | ---: | --- | ---: | ---: | --- | ---: | ---: | --- | ---: |"]
    for record in result["records"]:
        head = f"| {record['name']} | {record['half']} | {record.get('dtype', '-')} | "
        if record.get("status") != "ok":
            lines.append(head + f"{record.get('status', '?')}: {record.get('message', '')} |" + " |" * 9)
            continue
        m = record["matrix"]
        s = summarize(record)
        cells = [f"{m['rows']:,} x {m['cols']:,}", f"{m['nnz']:,}"]
        for label in ("auto", "tuned"):
            part = s.get(label)
            cells += [part["kernel"], _x(part["per_call"]), _x(part["device"])] if part else ["-", "-", "-"]
        best = s.get("best")
        cells += [best["kernel"], _x(best["device"])] if best else ["-", "-"]
        lines.append(head + " | ".join(cells) + " |")
    skipped = result.get("skipped", [])
    if skipped:
        lines += ["", f"Not run (time budget spent): {', '.join(skipped)}"]
    if not result.get("finished", True):
        lines += ["", "Unfinished: the run stopped after the matrices above (written after each one)."]
    return "\n".join(lines)


# -------------------------------------------------------------------- running
def run_one(job: dict, dtype: str, args) -> dict:
    import spla
    from spla.bench.spmv import compare
    from spla.bench.tune import RESULT_KEY
    from spla.planning import rle
    from spla.planning.spmv import describe_choice
    from spla.planning.stats import near_share, row_stats, tile_lines, tile_span
    from spla.planning.tune import tuner_times

    record = {**{k: v for k, v in job.items() if k != "matrix"}, "dtype": dtype}
    host = job["matrix"]
    csr = spla.as_csr(host)
    kernels = list(KERNELS) + [name for name in STRUCTURES if tuner_times(csr, name)]
    try:
        measured = compare(host, kernels, dtype=dtype, rounds=args.rounds, budget_s=args.kernel_budget_ms / 1e3)
    except Exception as exc:  # noqa: BLE001  (one matrix must not sink the run)
        return {**record, "status": "failed", "message": f"{type(exc).__name__}: {exc}"}
    run_matrix = csr.to_host().astype(dtype).to_device()
    tuned = run_matrix._cache.get(RESULT_KEY, {})
    auto: dict = next((row for row in measured["rows"] if row["kernel"] == "auto"), {})
    record.update(measured, status="ok", auto_kernel=auto.get("runs", describe_choice(run_matrix)["rule"]),
                  tuned_kernel=tuned.get("kernel", "tune"), tune=tuned,
                  row_stats=dataclasses.asdict(row_stats(run_matrix)),  # what scripts/fit_auto.py fits on
                  near_share=near_share(run_matrix),  # and scripts/fit_lanes.py
                  tile_span=tile_span(run_matrix),  # packed rows' split (AutoThresholds.packed_span ...
                  tile_lines=tile_lines(run_matrix),  # ... and packed_lines)
                  # where rle was timed (its runs already found): fit_auto.py applies rle's cut of the day
                  mean_run=rle.mean_run(csr) if "rle" in kernels else None)
    return record


def main(argv=None) -> int:
    args = parse_args(argv)
    import spla
    from spla.bench.timing import environment

    started = time.perf_counter()
    records, skipped = [], []
    prefix = Path(args.out)
    prefix.parent.mkdir(parents=True, exist_ok=True)
    env = environment()

    def write(finished: bool) -> dict:
        result = {"environment": env, "arguments": {k: str(v) for k, v in vars(args).items()},
                  "records": records, "skipped": skipped, "geomeans": geomeans(records),
                  "wall_s": time.perf_counter() - started, "finished": finished}
        Path(f"{prefix}.json").write_text(json.dumps(result, indent=1, default=str))
        Path(f"{prefix}.md").write_text(markdown(result) + "\n")
        return result

    for job in jobs(args):
        if time.perf_counter() - started > args.budget_min * 60:
            skipped.append(job["name"])
            continue
        t0 = time.perf_counter()
        try:
            job["matrix"] = (spla.load(job["path"]) if "path" in job
                             else corpus.build(job["family"], job["nnz_target"]))
        except Exception as exc:  # noqa: BLE001
            records.append({**job, "status": "failed", "message": f"load: {type(exc).__name__}: {exc}"})
            continue
        build_s = time.perf_counter() - t0
        for dtype in args.dtypes:
            record = run_one(job, dtype, args)
            record["build_s"] = build_s
            records.append(record)
            s = summarize(record) if record["status"] == "ok" else {}
            print(f"{record['name']:<24} {dtype}  " + ("  ".join(
                f"{k} {v['kernel']} {v['device']:.2f}x" for k, v in s.items()) or record.get("message", "")),
                flush=True)
        del job["matrix"]
        write(finished=False)  # what was measured so far survives a stop from outside
    print(markdown(write(finished=True)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
