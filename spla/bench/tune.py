"""``spla.tune``: time the plausible SpMV kernels on one matrix and keep the fastest.

The candidates and the persistent cache are host logic
(:mod:`spla.planning.tune`); this module measures. Each candidate is bound
(``spla.ops.spmv.bind``), run once into a NaN-poisoned output and checked
against the rule's choice (the difference, scaled by ``|| |A| |x| ||``, within
twice the dtype's tolerance of :mod:`spla.bench.check`, since both results
carry rounding), then timed in round-robin rounds by device time, the calls
queued behind a held stream as ``spla.bench`` times them. The
winner is the candidate with the lowest median; it replaces the rule's choice
only when it is more than :data:`TIE_MARGIN` faster, so timing noise does not
flip a near tie.

Cost: the first run of every candidate, then timed launches until both
``max_spmvs`` launches and ``budget_ms`` of device time are spent (whichever
comes later: a tiny matrix gets enough launches to rise above the noise, a
large one stops after ``max_spmvs``), plus compiling kernels not yet compiled.
"""

from __future__ import annotations

import statistics

import numpy as np

from .. import device as _device
from ..csr import as_csr
from ..errors import SplaError
from ..planning import tune as plan_tune
from ..planning.spmv import bound_param, parse_kernel
from . import check

X_SEED = 12345
# A candidate must beat the rule's choice by this much to replace it.
TIE_MARGIN = 0.02
# Candidates slower than this multiple of the fastest first estimate are not timed further.
PRUNE_FACTOR = 2.0
ROUNDS = 3
MAX_LAUNCHES = 20000  # per tuning, however fast the kernels
RESULT_KEY = "tune-result"  # the last tuning's result, on the matrix


def _device_ms(run, reps: int) -> float:
    """Device milliseconds per call of ``reps`` calls of ``run()`` queued behind a held stream
    (:func:`spla.backends.cuda.timing.queued_device_seconds`): events around a host loop would
    time the host's launches on any matrix whose kernel is shorter than a launch from Python,
    and pick among the kernels of a small matrix by noise."""
    from ..backends.cuda.timing import queued_device_seconds

    return queued_device_seconds(run, reps) * 1e3


def tune(A, *, budget_ms: float = plan_tune.BUDGET_MS, max_spmvs: int = plan_tune.MAX_SPMVS,
         persist: bool = True, seed: int = X_SEED) -> dict:
    """Time the candidate SpMV kernels on A and make the fastest what ``auto`` runs.

    Parameters
    ----------
    A : CSRMatrix, scipy.sparse or cupyx.scipy.sparse matrix
        Tuned in its value dtype; moved to the GPU (the copy cached on A).
    budget_ms : float
        Device time the timed launches may take (see the module notes).
    max_spmvs : int
        Timed launches the tuner may always take, however long they run.
    persist : bool
        Also record the winner in the tuning cache
        (:func:`spla.planning.tune.cache_path`), so ``auto`` picks it in
        later processes.
    seed : int
        Seed of the x the candidates run on.

    Returns
    -------
    dict
        ``kernel`` (the winner, now ``auto``'s choice for A), ``rule`` (the
        rule's choice), ``speedup_vs_rule``, ``candidates`` (one dict per
        kernel: ``status`` "ok", "wrong", "failed" or "pruned";
        ``error`` scaled by |A||x|; ``us``, the median device time per call,
        and ``rounds_us``), ``spmvs`` and ``device_ms`` spent, ``gpu``,
        ``fingerprint`` and ``persisted``.

    Raises
    ------
    NoGPUError
        Without CuPy or a GPU.
    SplaError
        When the rule's own kernel fails on A.

    Notes
    -----
    The result never changes beyond rounding: a candidate is only accepted
    after its product matched the rule's choice.

    Examples
    --------
    >>> import spla  # doctest: +SKIP
    >>> A = spla.load("gen:powerlaw:1000000:8")  # doctest: +SKIP
    >>> spla.tune(A)["kernel"]  # doctest: +SKIP
    'vector:4'
    """
    from ..backends.cuda import spmv as cuda_spmv
    from ..ops.spmv import bind

    cupy = _device.require_cupy()
    caller = as_csr(A)
    dev = caller.to_device()
    gpu = _device.device_name()
    names = plan_tune.candidates(dev)
    rule = names[0]
    dtype = dev.dtype
    one, zero = dtype.type(1), dtype.type(0)
    # each candidate's parameter spelled out (a bare name means the rule's width at the time)
    rows: dict[str, dict] = {name: {"kernel": name, "param": bound_param(dev, *parse_kernel(name))}
                             for name in names}
    result: dict = {"rule": rule, "gpu": gpu, "dtype": dtype.name, "index_dtype": dev.index_dtype.name,
                    "shape": list(dev.shape), "nnz": dev.nnz, "budget_ms": budget_ms, "max_spmvs": max_spmvs}
    spmvs, spent_ms = 0, 0.0

    x = cupy.asarray(np.random.default_rng(seed).uniform(-1, 1, dev.n_cols).astype(np.float32).astype(dtype))
    out = cupy.empty(dev.n_rows, dtype=dtype)
    try:
        reference = bind(dev, rule).launch(x, cupy.empty(dev.n_rows, dtype=dtype), one, zero)
    except Exception as exc:
        raise SplaError(f"tuning needs the rule's kernel {rule!r}, which failed on this matrix: {exc}") from exc
    reference = reference.astype(np.float64)
    finite = cupy.isfinite(reference)
    # || |A| |x| ||, read from A's own arrays: no second copy of its values on the device
    magnitude = float(cupy.linalg.norm(cuda_spmv.abs_product(cupy, dev, x)[finite])) or 1.0

    launchers = {}
    for name in names:
        row = rows[name]
        try:
            launcher = bind(dev, name)
            out.fill(np.nan)  # a row the kernel skips fails the check
            y = launcher.launch(x, out, one, zero).astype(np.float64)
            # NaN/Inf (from NaN/Inf in A) must sit where the rule's result has them; the rest is measured
            if not bool(cupy.array_equal(cupy.isfinite(y), finite)):
                row["error"] = float("inf")
            else:
                row["error"] = float(cupy.linalg.norm(y[finite] - reference[finite])) / magnitude
        except Exception as exc:  # noqa: BLE001  (one broken candidate must not sink tuning)
            row.update(status="failed", message=f"{type(exc).__name__}: {exc}")
            continue
        spmvs += 1
        # two correct results can each be a tolerance away from the exact product
        if not check.passes(row["error"] / 2, dtype):
            row["status"] = "wrong"
            continue
        row["status"] = "ok"
        launchers[name] = lambda launcher=launcher: launcher.launch(x, out, one, zero)
    if rule not in launchers:
        raise SplaError(f"the rule's kernel {rule!r} failed its own check on this matrix")

    # one launch each for an estimate, then prune the clearly slower
    estimate = {}
    for name, run in launchers.items():
        estimate[name] = _device_ms(run, 1)
        spent_ms += estimate[name]
        spmvs += 1
    best = min(estimate.values())
    timed = [n for n in launchers if n == rule or estimate[n] <= PRUNE_FACTOR * best]
    for name in launchers:
        if name not in timed:
            rows[name]["status"] = "pruned"
            rows[name]["us"] = estimate[name] * 1e3
    per_round_ms = sum(estimate[n] for n in timed)
    by_launches = max(0, max_spmvs - spmvs)
    by_time = int(max(0.0, budget_ms - spent_ms) / max(per_round_ms / len(timed), 1e-6))
    launches = min(MAX_LAUNCHES, max(by_launches, by_time))
    reps = max(1, launches // (ROUNDS * len(timed)))
    samples: dict[str, list] = {n: [] for n in timed}
    for r in range(ROUNDS):
        order = timed[r % len(timed):] + timed[:r % len(timed)]  # rotate: no kernel always runs first
        for name in order:
            ms = _device_ms(launchers[name], reps)
            samples[name].append(ms * 1e3)
            spent_ms += ms * reps
            spmvs += reps
    for name in timed:
        rows[name].update(us=statistics.median(samples[name]), rounds_us=samples[name])
    fastest = min(timed, key=lambda n: rows[n]["us"])
    winner = fastest if rows[fastest]["us"] < (1 - TIE_MARGIN) * rows[rule]["us"] else rule

    plan_tune.set_choice(dev, winner, "measured")
    if caller is not dev:
        plan_tune.set_choice(caller, winner, "measured")
    key = plan_tune.fingerprint(dev, gpu)
    persisted = False
    if persist:
        persisted = plan_tune.TuneCache().store(key, {
            "kernel": winner, "rule": rule, "gpu": gpu, "dtype": dtype.name, "shape": list(dev.shape),
            "nnz": dev.nnz, "us": {n: round(rows[n]["us"], 3) for n in timed}})
    result.update(kernel=winner, source="measured", speedup_vs_rule=rows[rule]["us"] / rows[winner]["us"],
                  candidates=[rows[n] for n in names], spmvs=spmvs, device_ms=spent_ms, fingerprint=key,
                  persisted=persisted)
    for m in plan_tune.holders(dev):
        m._cache[RESULT_KEY] = result
    return result


def format_tune(result: dict) -> str:
    """A tuning result as text: one line per candidate, the winner marked."""
    lines = [f"tuned {result['shape'][0]}x{result['shape'][1]}, {result['nnz']:,} nnz, {result['dtype']} on "
             f"{result['gpu']}: {result['kernel']} ({result['speedup_vs_rule']:.2f}x the rule's {result['rule']}; "
             f"{result['spmvs']} SpMVs, {result['device_ms']:.1f} ms)"]
    for row in result["candidates"]:
        mark = "*" if row["kernel"] == result["kernel"] else " "
        timing = f"{row['us']:9.2f} us" if "us" in row else " " * 12
        lines.append(f" {mark} {row['kernel']:<14} {timing}  {row.get('status', '')}")
    return "\n".join(lines)
