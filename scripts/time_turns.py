#!/usr/bin/env python
"""Time committed SpMV kernels in turns on the same matrices, to tune a rule.

bench_spmv.py times each kernel once, one after the other, so a clock or
neighbour drift during the run lands on whichever kernel was being timed
(the same launcher timed twice in one run has differed by up to 10%). This
script times the listed kernels round-robin, --rounds times, and reports the
median over rounds of each round's median, beside cuSPARSE:

    PYTHONPATH=. python3 scripts/time_turns.py gen:banded:1000000:20 gen:random:4000000:16 \\
        --kernels vector:2,vector:4,vector:8,vector:16,adaptive --dtype float32 float64 --out DIR

Kernel names are those of spla.spmv (``vector:8`` is the vector kernel with 8
lanes a row); every result is checked against the float64 SciPy product
before it is timed. Use it to set spla.planning.spmv.lanes_for and
AUTO_RULE, then record the outcome in BENCHMARKS.md. With auto in --kernels,
it ends with auto's geomean over the lean cuSPARSE pair (list cusparse:2 too),
its worst run, the best timed kernel's geomean, and how often auto is within
15% of that best, per dtype.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np


def kernel_list(text: str) -> list:
    """"a,b:8" -> ["a", "b:8"], each checked against spla's kernel names."""
    from spla.planning import spmv as rules

    names = [k.strip() for k in text.split(",") if k.strip()]
    if not names:
        raise argparse.ArgumentTypeError("--kernels needs at least one kernel name")
    for name in names:
        try:
            rules.parse_kernel(name)
        except Exception as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return names


def describe(A) -> str:
    """What auto ran on A, and blocked's predicted gain over staged where A has more than one column
    block (so a table can set the model beside the measured ratio)."""
    from spla.planning import blocked
    from spla.planning import spmv as planning

    text = planning.choose_kernel(A)
    if blocked.n_blocks(A.n_cols) > 1:
        text += f", blocked predicted {blocked.predicted_gain(A):.2f}x staged"
    return text


def summarize(records: list) -> list[str]:
    """Per dtype, over the matrices where auto and cuSPARSE ran right: auto over the lean cuSPARSE
    call (the faster of ALG1 and ALG2 where both were timed), geomean and worst; the best timed
    spla kernel a matrix over the same anchor; and on how many matrices auto is within 15% of
    that best (issue 17's figures, from one run)."""
    from spla.bench.timing import FIRST_CHOICE_SLACK, geomean, within

    times: dict = {}
    for r in records:
        if r.get("status") == "ok":
            times.setdefault((r["dtype"], r["source"]), {})[r["kernel"]] = r["ms"]
    lines = []
    for dtype in sorted({d for d, _ in times}):
        runs = {src: t for (d, src), t in times.items() if d == dtype and "auto" in t and "cusparse" in t}
        if not runs:
            continue
        auto, best, close = {}, [], 0
        for source, t in runs.items():
            lean = min(t["cusparse"], t.get("cusparse:2", t["cusparse"]))
            fastest = min(ms for kernel, ms in t.items() if not kernel.startswith("cusparse"))
            auto[source] = lean / t["auto"]
            best.append(lean / fastest)
            close += within(fastest / t["auto"], FIRST_CHOICE_SLACK)
        worst = min(auto, key=auto.get)
        anchor = "the lean cuSPARSE pair" if all("cusparse:2" in t for t in runs.values()) else "cuSPARSE (ALG1)"
        lines.append(f"{dtype}: auto {geomean(auto.values()):.3f}x {anchor} (geomean of {len(runs)}; worst "
                     f"{auto[worst]:.3f}x, {Path(worst).stem}); the best timed spla kernel {geomean(best):.3f}x; "
                     f"auto within 15% of it on {close}/{len(runs)}")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("sources", nargs="+", help="matrix files, gen: specs or corpus:FAMILY:NNZ")
    parser.add_argument("--kernels", type=kernel_list, required=True, help="comma list of spla.spmv kernel names")
    parser.add_argument("--dtype", nargs="+", default=["float32"], choices=["float32", "float64"])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--budget", type=float, default=0.1, help="seconds per timing (default 0.1)")
    parser.add_argument("--out", type=Path, help="folder for turns.json")
    args = parser.parse_args(argv)

    import cupy

    from spla import bench
    from spla.bench import corpus
    from spla.ops import spmv as ops_spmv

    records = []
    environment = bench.environment()
    for source in args.sources:
        began = time.perf_counter()
        A64 = corpus.load(source, dtype=np.float64)
        check = bench.SpmvCheck.for_matrix(A64)
        print(f"{source}: {A64.n_rows:,} rows, {A64.nnz:,} nnz, mean row {A64.nnz / max(A64.n_rows, 1):.1f} "
              f"(loaded in {time.perf_counter() - began:.1f} s)", flush=True)
        for dtype in args.dtype:
            A = A64.astype(dtype).to_device()
            x = cupy.asarray(check.x.astype(dtype))
            out = cupy.empty(A.n_rows, dtype=dtype)
            runs, rows = {}, []
            for kernel in ["cusparse"] + [k for k in args.kernels if k != "cusparse"]:
                row = {"source": source, "dtype": dtype, "kernel": kernel, "nnz": int(A.nnz)}
                rows.append(row)
                out.fill(np.nan)
                if check.record(row, lambda A=A, x=x, out=out: ops_spmv.spmv(A, x, kernel=kernel, out=out), dtype,
                                f"{dtype} {kernel}"):
                    runs[kernel] = lambda kernel=kernel, A=A, x=x, out=out: ops_spmv.spmv(A, x, kernel=kernel, out=out)
            samples = bench.time_in_turns(runs, rounds=args.rounds, budget_s=args.budget)
            picked = describe(A) if "auto" in args.kernels else ""
            anchor = float(np.median(samples["cusparse"])) if "cusparse" in samples else float("nan")
            for row in rows:
                if row["status"] != "ok":
                    continue
                ms = float(np.median(samples[row["kernel"]]))
                row.update(ms=ms, rounds_ms=samples[row["kernel"]], cusparse_ms=anchor, speedup=anchor / ms)
                if row["kernel"] == "auto":
                    row["picked"] = picked
                print(f"  {dtype} {row['kernel']:<12} {ms:.4f} ms  {anchor / ms:.3f}x cuSPARSE  "
                      f"rounds {' '.join(f'{v:.4f}' for v in samples[row['kernel']])}"
                      + (f"  ({picked})" if row["kernel"] == "auto" else ""), flush=True)
            records += rows
            del A, x, out
            cupy.get_default_memory_pool().free_all_blocks()
        if args.out:  # after each matrix, so a run cut short keeps what it timed
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / "turns.json").write_text(json.dumps({"environment": environment, "kernels": args.kernels,
                                                             "results": records, "summary": summarize(records)},
                                                            indent=1))
    for line in summarize(records):
        print(line)
    return 0 if all(r["status"] == "ok" for r in records) else 1


if __name__ == "__main__":
    sys.exit(main())
