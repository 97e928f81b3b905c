"""Timing: the harness and the byte/FLOP models every report and script uses.

CPU work is timed with ``time.perf_counter``; GPU work with CUDA events
(``cupyx.profiler.benchmark``), so asynchronous launches are measured on the
device. Both warm up first and report the median with min/max.
"""

from __future__ import annotations

import datetime
import math
import statistics
import sys
import time
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Timing:
    """Seconds per call: median, min and max over ``repeat`` timed runs."""

    median: float
    min: float
    max: float
    repeat: int

    @property
    def ms(self) -> float:
        return self.median * 1e3

    def as_dict(self) -> dict:
        return asdict(self)


def _summary(samples) -> Timing:
    samples = [float(s) for s in samples]
    return Timing(statistics.median(samples), min(samples), max(samples), len(samples))


def time_cpu(fn, *, repeat: int = 20, warmup: int = 2, budget_s: float = 10.0) -> Timing:
    """Median wall time of ``fn()``; stops early (>= 3 runs) past ``budget_s``."""
    for _ in range(warmup):
        fn()
    samples = []
    start = time.perf_counter()
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
        if len(samples) >= 3 and time.perf_counter() - start > budget_s:
            break
    return _summary(samples)


def time_gpu(fn, *, repeat: int = 100, warmup: int = 10) -> Timing:
    """Median device time of ``fn()`` measured with CUDA events."""
    from cupyx.profiler import benchmark

    result = benchmark(fn, n_repeat=max(1, repeat), n_warmup=warmup)
    return _summary(result.gpu_times[0])


def time_gpu_budgeted(fn, *, budget_s: float, max_repeat: int, warmup: int) -> Timing:
    """Median device time of ``fn()``, the repeats sized to take about ``budget_s``.

    One call is timed with CUDA events first (after an untimed one, so
    compilation and planning are not counted), and the repeat count is
    ``budget_s`` over that time, clamped to 5..``max_repeat``: a benchmark suite
    with slow kernels stays quick while fast kernels still get many samples.

    See Also
    --------
    cupyx.profiler.benchmark
    """
    import cupy

    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    fn()
    start.record()
    fn()
    stop.record()
    stop.synchronize()
    once = cupy.cuda.get_elapsed_time(start, stop) / 1e3
    repeat = int(min(max_repeat, max(5, budget_s / max(once, 1e-6))))
    return time_gpu(fn, repeat=repeat, warmup=warmup)


def time_on(device: str, fn, *, repeat: int, warmup: int | None = None) -> Timing:
    if device == "gpu":
        return time_gpu(fn, repeat=repeat, warmup=10 if warmup is None else warmup)
    return time_cpu(fn, repeat=repeat, warmup=2 if warmup is None else warmup)


def spmv_bytes(n_rows: int, n_cols: int, nnz: int, value_bytes: int = 4, index_bytes: int = 4, k: int = 1) -> int:
    """Fewest bytes a CSR SpMV (k right-hand sides) must move, per DESIGN.md.

    values + column indices once, indptr once, x read once, y written once.
    """
    return ((value_bytes + index_bytes) * nnz + index_bytes * (n_rows + 1)
            + value_bytes * k * (n_cols + n_rows))


def spmv_flops(nnz: int, k: int = 1) -> int:
    return 2 * nnz * k


def throughput(seconds: float, flops: int, nbytes: int) -> dict:
    """GFLOP/s and effective GB/s for one timed call."""
    if seconds <= 0:
        return {"gflops": float("nan"), "gbps": float("nan")}
    return {"gflops": flops / seconds / 1e9, "gbps": nbytes / seconds / 1e9}


def geomean(values) -> float:
    """Geometric mean of the positive finite entries of ``values`` (NaN when there are none).

    None, zero, negative and non-finite entries (failed or missing
    measurements) are skipped rather than poisoning the mean.

    See Also
    --------
    scipy.stats.gmean
    """
    values = [v for v in values if v and math.isfinite(v) and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


FIRST_CHOICE_SLACK = 0.15  # issue 17: auto's untuned first-call choice within 15% of the best spla kernel
TUNED_SLACK = 0.05  # ... and a tuned (or fitted parameter's) choice within 5%


def within(quality: float, slack: float) -> bool:
    """Whether a pick is within ``slack`` of the best, where ``quality`` is the best time over the
    pick's (1.0 = the pick is the best): the pick takes at most ``1 + slack`` times the best time.

    The one reading of "within 15%" (``FIRST_CHOICE_SLACK``) and "within 5%" (``TUNED_SLACK``)
    that every script's count uses: 15% is a quality of at least 1/1.15 = 0.870, not 0.85.
    """
    return quality * (1 + slack) >= 1 - 1e-12


def environment() -> dict:
    """Where and when a benchmark ran, for its JSON: GPU name, CuPy, NumPy and
    SciPy versions, UTC date and the command line."""
    import cupy
    import numpy
    import scipy

    from .. import device

    return {"gpu": device.device_name(), "cupy": cupy.__version__, "numpy": numpy.__version__,
            "scipy": scipy.__version__,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "command": " ".join(sys.argv)}


def time_in_turns(runs: dict, *, rounds: int, budget_s: float, max_repeat: int = 500, warmup: int = 3) -> dict:
    """Time each callable of ``runs`` round-robin, ``rounds`` times
    (:func:`time_gpu_budgeted` each turn): ``{name: [ms of each round]}``.
    Drift on a shared machine then hits every entry alike; report the median."""
    samples: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, fn in runs.items():
            samples[name].append(time_gpu_budgeted(fn, budget_s=budget_s, max_repeat=max_repeat,
                                                   warmup=warmup).ms)
    return samples


def host_turns(runs: dict, *, rounds: int, budget_s: float) -> dict:
    """Median host seconds a call of each callable of ``runs``, timed round-robin: ``rounds``
    rounds, each running every callable back to back for about ``budget_s`` (the count fixed by
    one untimed call). CPU work; drift on a shared machine hits every entry alike."""
    counts = {}
    for name, fn in runs.items():
        start = time.perf_counter()
        fn()
        counts[name] = max(1, int(budget_s / max(time.perf_counter() - start, 1e-7)))
    samples: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, fn in runs.items():
            start = time.perf_counter()
            for _ in range(counts[name]):
                fn()
            samples[name].append((time.perf_counter() - start) / counts[name])
    return {name: statistics.median(values) for name, values in samples.items()}


_COPY_BANDWIDTH: dict = {}


def host_copy_bandwidth_gbps(nbytes: int = 1 << 28) -> float:
    """Measured host memory copy bandwidth (read + write) with NumPy, cached per process."""
    if "cpu" not in _COPY_BANDWIDTH:
        import numpy as np

        src = np.random.default_rng(0).random(nbytes // 8)
        dst = np.empty_like(src)
        t = time_cpu(lambda: np.copyto(dst, src), repeat=5, warmup=1)
        _COPY_BANDWIDTH["cpu"] = 2 * src.nbytes / t.median / 1e9
    return _COPY_BANDWIDTH["cpu"]


def copy_bandwidth_gbps(nbytes: int = 1 << 30) -> float:
    """Measured device-to-device copy bandwidth (read + write), cached per process."""
    if "gpu" not in _COPY_BANDWIDTH:
        import cupy

        src = cupy.random.random(nbytes // 8)
        dst = cupy.empty_like(src)
        t = time_gpu(lambda: dst.__setitem__(slice(None), src), repeat=20, warmup=3)
        _COPY_BANDWIDTH["gpu"] = 2 * src.nbytes / t.median / 1e9
        del src, dst
    return _COPY_BANDWIDTH["gpu"]
