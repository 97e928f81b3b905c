"""What dia's palette detection costs in one kernel (spla.planning.dia.palette, session 41) beside the
CuPy passes it replaced (session 40's, copied below as ``chunked``), on the same device copies, in
turns; both codings checked equal. Then dia's values entry and its palette entry in turns (device
time, the median of the rounds, each result checked against the float64 product first), so the
cost reads as the dia calls whose saving pays it back.

    PYTHONPATH=. python3 palette_cost2.py SOURCE... [--dtype float32 float64] [--rounds 3] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

CHUNK = 1 << 24


def chunked(values):
    """Session 40's detection (spla/planning/dia.py at 4896be7): sample, then CuPy's binary search
    over chunks of slots, one host read of the count off the table; a second pass where the sample
    missed values. Returns (codes, table) or None."""
    import cupy

    from spla.planning import dia

    bits = values.view(f"u{values.dtype.itemsize}").reshape(-1)
    keys = dia._distinct(bits[np.random.default_rng(0).integers(0, bits.size, size=dia.SAMPLE)].get())
    keys = keys[keys != 0]
    chunks = [(start, bits[start:start + CHUNK]) for start in range(0, bits.size, CHUNK)]

    def coded(table, part):
        padding = part == 0
        at = cupy.minimum(cupy.searchsorted(table, part), table.size - 1)
        return cupy.where(padding, 0, at + 1), padding | (table[at] == part)

    for _ in range(2):
        if keys.size > dia.PALETTE_VALUES:
            return None
        table, codes = cupy.asarray(keys), cupy.zeros(bits.size, dtype=cupy.uint8)
        off_table = cupy.zeros((), dtype=cupy.int64)
        for start, part in chunks:
            codes[start:start + part.size], known = coded(table, part)
            off_table += (~known).sum()
        if int(off_table) == 0:
            return codes.reshape(values.shape), table
        missed = [dia._distinct(part[~coded(table, part)[1]].get()) for _, part in chunks]
        keys = dia._distinct(np.concatenate([keys, *missed]))
    raise AssertionError("values off their own table")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="+", help="files, gen: specs or corpus:FAMILY:NNZ")
    parser.add_argument("--dtype", nargs="+", default=["float32", "float64"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--budget", type=float, default=0.02, help="seconds an entry a round and figure")
    parser.add_argument("--json", type=Path, help="the figures, a record a run")
    args = parser.parse_args(argv)

    import cupy

    import spla
    from spla.bench import corpus
    from spla.bench.spmv import time_rounds
    from spla.planning import dia

    def timed(call):
        cupy.cuda.runtime.deviceSynchronize()
        start = time.perf_counter()
        result = call()
        cupy.cuda.runtime.deviceSynchronize()
        return result, (time.perf_counter() - start) * 1e3

    def bound(host_matrix, dtype, palette: bool):
        """A device copy bound to dia with the palette entry or the values' entry, and its call."""
        saved = dia.PALETTE_DTYPES
        dia.PALETTE_DTYPES = saved if palette else ()
        A = host_matrix.astype(dtype, copy=True).to_device()
        x = cupy.asarray(np.random.default_rng(1).standard_normal(A.n_cols)).astype(dtype)
        out = cupy.empty(A.n_rows, dtype=dtype)
        spla.spmv(A, x, kernel="dia", out=out)  # binds under the switch
        dia.PALETTE_DTYPES = saved
        want = host_matrix.to_scipy() @ x.get().astype(np.float64)
        assert np.allclose(out.get(), want, rtol=1e-3 if dtype == "float32" else 1e-9, atol=1e-3), "wrong product"
        return lambda: spla.spmv(A, x, kernel="dia", out=out)

    dia.PALETTE_MIN_BYTES = 0  # the detection at every size, as if taken
    records: list = []
    print(f"device {cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}", flush=True)
    for source in args.sources:
        host = corpus.load(source, dtype=np.float64)
        for dtype in args.dtype:
            times = {"kernel": [], "chunked": []}
            for r in range(args.rounds + 1):  # round 0 compiles and warms the pools
                A = host.astype(dtype, copy=True).to_device()
                found = dia.structure(A)
                assert isinstance(found, dia.Structure), found
                values = found.values  # (since session 42 a palette releases them from the structure)
                for name in (("kernel", "chunked") if r % 2 else ("chunked", "kernel")):
                    if name == "kernel":
                        A._cache.pop("dia-palette", None)
                        coded, ms = timed(lambda A=A, found=found: dia.palette(A, found))
                    else:
                        old, ms = timed(lambda values=values: chunked(values))
                    if r:
                        times[name].append(ms)
                assert (coded is None) == (old is None)
                if coded is not None:  # the same codes and table
                    assert bool((coded.codes == old[0]).all()) and bool((coded.table[1:] == old[1].view(dtype)).all())
            runs = {"values": bound(host, dtype, False), "palette": bound(host, dtype, True)}
            _, device = time_rounds(cupy, runs, args.rounds, args.budget)
            values_us, palette_us = (statistics.median(device[name]) for name in ("values", "palette"))
            kernel_ms, chunked_ms = min(times["kernel"]), min(times["chunked"])
            saved_us = values_us - palette_us
            repaid = kernel_ms * 1e3 / saved_us if saved_us > 0 else float("inf")
            print(f"{source} {dtype} nnz {A.nnz:,} values {found.nbytes / 1e6:.0f} MB "
                  f"({'none' if coded is None else f'{coded.n_values} values'}): detection kernel {kernel_ms:.3f} ms "
                  f"(rounds {' '.join(f'{t:.3f}' for t in times['kernel'])}), chunked {chunked_ms:.3f} ms; "
                  f"dia call {values_us:.1f} us values, {palette_us:.1f} us palette: kernel = "
                  f"{kernel_ms * 1e3 / values_us:.0f} calls, repaid in {repaid:.0f} palette calls", flush=True)
            records.append({"source": source, "dtype": dtype, "nnz": A.nnz, "values_bytes": int(found.nbytes),
                            "detection_ms": kernel_ms, "chunked_ms": chunked_ms, "values_us": device["values"],
                            "palette_us": device["palette"]})
            if args.json:
                args.json.write_text(json.dumps(records, indent=1))
            del A, found, coded, old
    return 0


if __name__ == "__main__":
    sys.exit(main())
