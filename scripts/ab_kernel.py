#!/usr/bin/env python
"""A/B one SpMV kernel against variants of its source, beside cuSPARSE, in one run.

Each variant is the kernel's .cu file compiled with extra NVRTC options
(usually -D switches a working copy reads) or another file of the same kernels
(it may include "common.cuh"):

    PYTHONPATH=. python3 scripts/ab_kernel.py gen:powerlaw:16000000:8:34000 gen:weblike \\
        --kernel segmented:8 --variant committed= \\
        --variant try=file:scripts/spmv_segmented_try.cu \\
        --variant try_x="file:scripts/spmv_segmented_try.cu -DTRY_X=1" --out DIR

A file variant must travel to the GPU machine with the working tree (not under
/tmp); the A/B files of segmented's rounds 4-8 are in
docs/lab/h200-2026-12-02-striped/. Each variant is built for the entry point
spla's launcher runs on the matrix: for segmented, spla_spmv_segmented_bits where
no row is empty (_bits_short where no row is longer than a tile either; a file
without them then fails there), else spla_spmv_segmented.

Every variant is checked against the float64 SciPy reference before it is
timed (a wrong variant is reported, not timed). Variants and cuSPARSE are timed
in turns, --rounds times, so drift on a shared machine hits all of them alike,
both ways spla.bench times SpMV (spla.bench.spmv.time_rounds): the figure is the
device time of a call (calls queued behind a held stream, host cost excluded),
the median over rounds, with the per-call time from Python beside it. (Until
session 39 it was one CUDA-event timing a call, which on a kernel of a few
microseconds also counted the launch's latency.) Use it to decide
what goes into kernels/, then record the outcome in BENCHMARKS.md: the
committed kernel is what scripts/bench_spmv.py measures.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

LAUNCH_KEYS = ("block", "grid", "carveout")


def parse_variant(text: str):
    """NAME=[file:PATH] [OPTION...] [@block=THREADS] [@grid=BLOCKS] [@carveout=PERCENT]"""
    name, sep, spec = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"a variant is NAME=OPTIONS or NAME=file:PATH, got {text!r}")
    path, options, launch = None, [], {}
    for token in spec.split():
        if token.startswith("file:"):
            path = Path(token[5:])
        elif token.startswith("@"):
            key, _, value = token[1:].partition("=")
            if key not in LAUNCH_KEYS or not value.isdigit():
                raise argparse.ArgumentTypeError(f"a launch override is @KEY=INTEGER with KEY one of "
                                                 f"{', '.join(LAUNCH_KEYS)}; got {token!r}")
            launch[key] = value
        else:
            options.append(token)
    return name, path, tuple(options), launch


def variant_launcher(bound, kernel, launch):
    """The bound launcher running ``kernel`` with a variant's launch overrides (through the
    backend's public ``variant`` hook): @block=THREADS (for a block size the variant sets
    with -D; one tile per warp, as segmented), @grid=BLOCKS and @carveout=PERCENT (the
    share of the SM's L1/shared memory the kernel would like as shared memory: 0 prefers
    L1, 100 shared memory)."""
    if "carveout" in launch:
        kernel.preferred_shared_memory_carveout = int(launch["carveout"])
    return bound.variant(kernel, threads_per_tile=int(launch["block"]) if "block" in launch else None,
                         grid=int(launch["grid"]) if "grid" in launch else None)


def variant_options(base: tuple, kernel_dir, options: tuple, tag: int) -> tuple:
    """NVRTC options of variant number ``tag``: spla's, the kernel folder, the variant's own, and
    ``-DSPLA_AB_VARIANT=tag``, so two variants of the same source and options are two modules. CuPy
    hands back one cached function for one (code, options): a carveout set on one variant's
    function (@carveout) would otherwise hold for the other too (session 18's call 8 timed four
    variants all at carveout 100 that way)."""
    return (*base, f"-I{kernel_dir}", *options, f"-DSPLA_AB_VARIANT={tag}")


def compile_variant(family, dtype, index_dtype, param, path, options, tag: int, entry: str = ""):
    """Variant ``tag``'s RawKernel for the name expression spla would use (``entry``: the bound
    launcher's entry point, e.g. segmented's ``_bits``, which a variant file must then define)."""
    import cupy

    from spla.backends.cuda import runtime
    from spla.backends.cuda import spmv as cuda_spmv

    source = cuda_spmv.SOURCES[family]
    name = cuda_spmv.kernel_name(family + entry, dtype, index_dtype, param)
    code = (path or source.path).read_text()
    module = cupy.RawModule(code=code, options=variant_options(source.options, runtime.kernel_dir(), options, tag),
                            name_expressions=(name,))
    module.compile()
    return module.get_function(name)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("sources", nargs="+", help="matrix files, gen: specs or corpus:FAMILY:NNZ")
    parser.add_argument("--kernel", required=True, help="a kernel whose launcher runs one function, e.g. segmented:8")
    parser.add_argument("--variant", action="append", type=parse_variant, required=True,
                        help="NAME=[file:PATH] [NVRTC option...] [@block=THREADS] [@grid=BLOCKS] [@carveout=PERCENT]")
    parser.add_argument("--dtype", nargs="+", default=["float32"], choices=["float32", "float64"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--budget", type=float, default=0.1, help="seconds per timing (default 0.1)")
    parser.add_argument("--out", type=Path, help="folder for ab.json")
    args = parser.parse_args(argv)

    import cupy

    from spla import bench
    from spla.bench import corpus
    from spla.bench.spmv import time_rounds
    from spla.ops import spmv as ops_spmv
    from spla.planning import spmv as rules

    family, param = rules.parse_kernel(args.kernel)
    records = []
    for source in args.sources:
        began = time.perf_counter()
        A64 = corpus.load(source, dtype=np.float64)
        check = bench.SpmvCheck.for_matrix(A64)
        print(f"{source}: {A64.n_rows:,} rows, {A64.nnz:,} nnz (loaded in {time.perf_counter() - began:.1f} s)",
              flush=True)
        for dtype in args.dtype:
            A = A64.astype(dtype).to_device()
            x = cupy.asarray(check.x.astype(dtype))
            out = cupy.empty(A.n_rows, dtype=dtype)
            ops_spmv.spmv(A, x, kernel=args.kernel, out=out)  # binds the launcher the variants copy
            bound = ops_spmv.bound_launcher(A, args.kernel)
            one, zero = A.dtype.type(1), A.dtype.type(0)
            runs: dict[str, Callable[[], object]] = {"cusparse": lambda: ops_spmv.spmv(A, x, kernel="cusparse", out=out)}
            for tag, (name, path, options, launch) in enumerate(args.variant):
                row = {"source": source, "dtype": dtype, "variant": name, "options": list(options),
                       "file": str(path) if path else None, "launch": launch}
                records.append(row)
                variant = {}

                def first_run():  # called right away, so the loop's variables are this variant's
                    kernel = compile_variant(family, A.dtype, A.index_dtype, rules.bound_param(A, family, param),
                                             path, options, tag, bound.entry)
                    launcher = variant["launcher"] = variant_launcher(bound, kernel, launch)
                    row["grid"] = launcher.grid[0]
                    out.fill(np.nan)
                    return launcher.launch(x, out, one, zero)

                if check.record(row, first_run, dtype, f"{dtype} {name}"):
                    runs[name] = functools.partial(variant["launcher"].launch, x, out, one, zero)
            for run in runs.values():  # bound before timing: a first call may set up and synchronise
                run()
            cupy.cuda.get_current_stream().synchronize()
            per_call, device = time_rounds(cupy, runs, args.rounds, args.budget)
            anchor = float(np.median(device["cusparse"])) / 1e3
            print(f"  {dtype}: cusparse {anchor:.4f} ms", flush=True)
            for row in records:
                if row["source"] == source and row["dtype"] == dtype and row["status"] == "ok":
                    rounds_ms = [us / 1e3 for us in device[row["variant"]]]
                    ms = float(np.median(rounds_ms))
                    row.update(ms=ms, rounds_ms=rounds_ms, cusparse_ms=anchor, speedup=anchor / ms,
                               per_call_us=float(np.median(per_call[row["variant"]])),
                               cusparse_per_call_us=float(np.median(per_call["cusparse"])))
                    print(f"  {dtype} {row['variant']:<16} {ms:.4f} ms  {anchor / ms:.3f}x cuSPARSE  "
                          f"per call {row['per_call_us']:.1f} us  rounds {' '.join(f'{v:.4f}' for v in rounds_ms)}",
                          flush=True)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "ab.json").write_text(json.dumps({"environment": bench.environment(), "kernel": args.kernel,
                                                       "results": records}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
