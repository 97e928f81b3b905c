"""Session 64: the SpMM tuner (spla.tune(A, k=k)) on every corpus family, beside the rule and cuSPARSE.

For each corpus family at NNZ nonzeros, both dtypes, each k of KS: ``spla.tune(A, k=k, persist=False)``
(its wall time, device time and calls recorded), then, on a fresh X, the rule's kernel, the tuner's
winner and cuSPARSE SpMM (the fastest of its CSR algorithms, the benchmarks' anchor) are each checked
against a float64 product and re-timed in turns (3 rounds; per-call and device time, spla.spmm with an
explicit kernel): the tuner picks on its own timings, so its winner is judged on new ones. Prints a line
per run and a summary per (half, dtype, k); writes tuned_spmm.json after every run.

    [KS="8 32 64"] [SEED=0] [FAMILIES="a b" | REAL=DIR | SPECS="gen:banded:6000:3 ..."] PYTHONPATH=. \
        python3 docs/lab/gpu-2026-12-07-session64/tuned_spmm.py OUT [NNZ]
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import cupy
import cupyx.scipy.sparse as cusp
import numpy as np

import spla
from spla import bench
from spla.bench import corpus
from spla.bench.spmv import time_rounds
from spla.io import generators

KS = tuple(int(k) for k in os.environ.get("KS", "8 32 64").split())
FAMILIES = tuple(os.environ.get("FAMILIES", "").split()) or tuple(corpus.families())
SEED = int(os.environ.get("SEED", "0"))  # another seed: other matrices of the same families
TOLERANCE = {"float32": 1e-4, "float64": 1e-12}


def main(out: Path, nnz: int) -> None:
    out.mkdir(parents=True, exist_ok=True)
    records = []
    for name, half, build in sources(nnz):
        try:
            host = build()
        except Exception as error:  # noqa: BLE001
            print(f"{name}: load failed: {type(error).__name__}: {error}", flush=True)
            continue
        A64 = cusp.csr_matrix((cupy.asarray(host.data, dtype=np.float64), cupy.asarray(host.indices),
                               cupy.asarray(host.indptr)), shape=host.shape)
        for dtype in ("float32", "float64"):
            A = host.astype(dtype).to_device()
            for k in KS:
                began = time.perf_counter()
                try:
                    result = spla.tune(A, k=k, persist=False)
                except Exception as error:  # noqa: BLE001  (one matrix must not end the run)
                    print(f"{half} {name} {dtype} k={k}: tune failed: {type(error).__name__}: {error}", flush=True)
                    continue
                wall = time.perf_counter() - began
                X = cupy.random.default_rng(1000 + k).uniform(-1, 1, (host.shape[1], k)).astype(dtype)
                Y = cupy.empty((host.shape[0], k), dtype)
                want = A64 @ X.astype(np.float64)
                picks = {"rule": result["rule"], "tuned": result["kernel"], "cusparse": "cusparse"}
                runs, errors = {}, {}
                for label, kernel in picks.items():
                    if label == "tuned" and kernel == result["rule"]:
                        continue  # the same kernel as the rule's row
                    Y.fill(np.nan)
                    run = (lambda A=A, X=X, Y=Y, kernel=kernel: spla.spmm(A, X, out=Y, kernel=kernel))
                    run()
                    errors[label] = float(cupy.linalg.norm(Y - want) / cupy.linalg.norm(want))
                    if errors[label] <= TOLERANCE[dtype]:
                        runs[label] = run
                del want
                per_call, device = time_rounds(cupy, runs, rounds=3, budget_s=0.02)
                us = {label: float(np.median(v)) for label, v in device.items()}
                call_us = {label: float(np.median(v)) for label, v in per_call.items()}
                if "tuned" not in us and "rule" in us:  # the winner is the rule
                    us["tuned"], call_us["tuned"] = us["rule"], call_us["rule"]
                candidates = {row["kernel"]: row.get("us") for row in result["candidates"]}
                records.append({"half": half, "matrix": name, "nnz": host.nnz, "shape": list(host.shape),
                                "dtype": dtype, "k": k, "rule": result["rule"], "tuned": result["kernel"],
                                "tuner_us": candidates, "tuner_status": {row["kernel"]: row.get("status")
                                                                         for row in result["candidates"]},
                                "tune_device_ms": result["device_ms"], "tune_calls": result["calls"],
                                "tune_wall_s": wall, "errors": errors, "device_us": us, "per_call_us": call_us})
                get = {label: us.get(label, float("nan")) for label in ("rule", "tuned", "cusparse")}
                print(f"{half} {name} {dtype} k={k}: rule {result['rule']} {get['rule']:.1f} us, tuned "
                      f"{result['kernel']} {get['tuned']:.1f} us, cusparse {get['cusparse']:.1f} us | tuned x rule "
                      f"{get['rule'] / get['tuned']:.3f}, x cuSPARSE {get['cusparse'] / get['tuned']:.3f} (rule "
                      f"{get['cusparse'] / get['rule']:.3f}) | tune {wall:.2f} s wall, {result['device_ms']:.1f} ms "
                      f"device, {result['calls']} calls"
                      + ("" if max(errors.values()) <= TOLERANCE[dtype] else f" | FAILED CHECK {errors}"), flush=True)
                (out / "tuned_spmm.json").write_text(json.dumps({"environment": bench.environment(), "nnz": nnz,
                                                                "records": records}, indent=1))
            A = None
        A64 = None
    summary(records)


def sources(nnz: int):
    """(name, half, build) for each corpus family of FAMILIES at nnz, with REAL=DIR each Matrix Market
    file there (half "real": matrices no rule or candidate list was fitted on), or with SPECS each
    generator spec (half "spec"; NNZ is then ignored; added in session 66)."""
    if os.environ.get("SPECS"):
        for spec in os.environ["SPECS"].split():
            yield spec, "spec", lambda spec=spec: generators.from_spec(spec)
        return
    real = os.environ.get("REAL")
    if real:
        for path in sorted(Path(real).glob("*.mtx*")):
            yield path.name.split(".mtx")[0], "real", lambda path=path: spla.load(str(path)).astype("float64")
        return
    for name in FAMILIES:
        yield name, corpus.FAMILIES[name].half, lambda name=name: corpus.build(name, nnz, seed=SEED)


def summary(records) -> None:
    for half in ("fit", "report", "real", "spec"):
        for dtype in ("float32", "float64"):
            for k in KS:
                rows = [r for r in records if (r["half"], r["dtype"], r["k"]) == (half, dtype, k)
                        and {"rule", "tuned", "cusparse"} <= r["device_us"].keys()]
                if not rows:
                    continue
                d = [r["device_us"] for r in rows]
                c = [r["per_call_us"] for r in rows]
                tuned_x = [x["cusparse"] / x["tuned"] for x in d]
                rule_x = [x["cusparse"] / x["rule"] for x in d]
                print(f"{half} {dtype} k={k} ({len(rows)} runs), device time: tuned x cuSPARSE "
                      f"{bench.geomean(tuned_x):.3f} (lowest {min(tuned_x):.3f}, "
                      f"{sum(v < 1 for v in tuned_x)} under 1), "
                      f"rule x cuSPARSE {bench.geomean(rule_x):.3f} (lowest {min(rule_x):.3f}, "
                      f"{sum(v < 1 for v in rule_x)} under 1), tuned x rule "
                      f"{bench.geomean([x['rule'] / x['tuned'] for x in d]):.3f}; per call: tuned x cuSPARSE "
                      f"{bench.geomean([x['cusparse'] / x['tuned'] for x in c]):.3f}; tune wall median "
                      f"{np.median([r['tune_wall_s'] for r in rows]):.2f} s", flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(float(sys.argv[2])) if len(sys.argv) > 2 else 4_000_000)
