"""``spla.tune``: time the plausible SpMV (or SpMM) kernels on one matrix and keep the fastest.

The candidates and the persistent cache are host logic
(:mod:`spla.planning.tune`); this module measures. Each candidate is bound
(``spla.ops.spmv.bind``, or ``spla.backends.cuda.spmm.bind`` at k columns), run
once into a NaN-poisoned output and checked against the rule's choice (the
difference, scaled by ``|| |A| |x| ||``, within twice the dtype's tolerance of
:mod:`spla.bench.check`, since both results carry rounding), then timed in
round-robin rounds by device time, the calls queued behind a held stream as
``spla.bench`` times them. The winner is the candidate with the lowest median;
it replaces the rule's choice only when it is more than :data:`TIE_MARGIN`
faster, so timing noise does not flip a near tie.

Cost: the first run of every candidate, then timed launches until both
``max_calls`` launches and ``budget_ms`` of device time are spent (whichever
comes later: a tiny matrix gets enough launches to rise above the noise, a
large one stops after ``max_calls``), plus compiling kernels not yet compiled.
"""

from __future__ import annotations

import numbers
import statistics

import numpy as np

from .. import device as _device
from ..csr import as_csr
from ..errors import InputError, SplaError
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
RESULT_KEY = "tune-result"  # the last SpMV tuning's result, on the matrix
SPMM_RESULT_KEY = "spmm-tune-result"  # {k: the last SpMM tuning's result at k}, on the matrix


def _device_ms(run, reps: int) -> float:
    """Device milliseconds per call of ``reps`` calls of ``run()`` queued behind a held stream
    (:func:`spla.backends.cuda.timing.queued_device_seconds`): events around a host loop would
    time the host's launches on any matrix whose kernel is shorter than a launch from Python,
    and pick among the kernels of a small matrix by noise."""
    from ..backends.cuda.timing import queued_device_seconds

    return queued_device_seconds(run, reps) * 1e3


class _SpmvProducts:
    """What tuning the SpMV needs: its candidates, a run of each into one output, and where the
    winner goes."""

    def __init__(self, dev, rng):
        cupy = _device.require_cupy()
        self.dev = dev
        self.names = plan_tune.candidates(dev)
        self.x = cupy.asarray(rng.uniform(-1, 1, dev.n_cols).astype(np.float32).astype(dev.dtype))
        self.out = cupy.empty(dev.n_rows, dtype=dev.dtype)

    def magnitude(self, finite) -> float:
        """|| |A| |x| || over the finite entries, read from A's own arrays: no second copy of its values."""
        from ..backends.cuda import spmv as cuda_spmv

        cupy = _device.require_cupy()
        return float(cupy.linalg.norm(cuda_spmv.abs_product(cupy, self.dev, self.x)[finite]))

    def row(self, name: str) -> dict:
        # each candidate's parameter spelled out (a bare name means the rule's width at the time)
        return {"kernel": name, "param": bound_param(self.dev, *parse_kernel(name))}

    def bind(self, name: str):
        from ..ops.spmv import bind

        launcher = bind(self.dev, name)
        one, zero = self.dev.dtype.type(1), self.dev.dtype.type(0)
        return lambda: launcher.launch(self.x, self.out, one, zero)

    def record(self, matrices, winner: str, result: dict, persist: bool, gpu: str) -> tuple[str, bool]:
        for m in matrices:
            plan_tune.set_choice(m, winner, "measured")
        key = plan_tune.fingerprint(self.dev, gpu)
        persisted = persist and plan_tune.TuneCache().store(key, _entry(result, winner))
        for m in plan_tune.holders(self.dev):
            m._cache[RESULT_KEY] = result
        return key, persisted


class _SpmmProducts:
    """The same for SpMM at k columns (X row-major, as spla.spmm's kernels take it)."""

    def __init__(self, dev, k: int, rng):
        cupy = _device.require_cupy()
        self.dev, self.k = dev, k
        self.names = plan_tune.spmm_candidates(dev, k)
        self.x = cupy.asarray(rng.uniform(-1, 1, (dev.n_cols, k)).astype(np.float32).astype(dev.dtype))
        self.out = cupy.empty((dev.n_rows, k), dtype=dev.dtype)

    def magnitude(self, finite) -> float:
        """|| |A| |X| || over the finite entries (Frobenius), a column of X at a time."""
        from ..backends.cuda import spmv as cuda_spmv

        cupy = _device.require_cupy()
        squares = 0.0
        for j in range(self.k):  # no (rows x k) float64 block
            column = cuda_spmv.abs_product(cupy, self.dev, cupy.ascontiguousarray(self.x[:, j]))
            squares += float(cupy.linalg.norm(column[finite[:, j]])) ** 2
        return squares ** 0.5

    def row(self, name: str) -> dict:
        return {"kernel": name}

    def bind(self, name: str):
        from ..backends.cuda import spmm as cuda_spmm

        launcher = cuda_spmm.bind(self.dev, cuda_spmm.plan(self.dev, self.k, name))
        one, zero = self.dev.dtype.type(1), self.dev.dtype.type(0)
        return lambda: launcher(self.x, self.out, None, one, zero)

    def record(self, matrices, winner: str, result: dict, persist: bool, gpu: str) -> tuple[str, bool]:
        for m in matrices:
            plan_tune.set_spmm_choice(m, self.k, winner, "measured")
        key = plan_tune.spmm_key(self.dev, self.k, gpu)
        persisted = persist and plan_tune.TuneCache().store(key, {**_entry(result, winner), "k": self.k})
        for m in plan_tune.holders(self.dev):
            m._cache.setdefault(SPMM_RESULT_KEY, {})[self.k] = result
        return key, persisted


def _entry(result: dict, winner: str) -> dict:
    """What the tuning cache keeps of a result."""
    return {"kernel": winner, "rule": result["rule"], "gpu": result["gpu"], "dtype": result["dtype"],
            "shape": result["shape"], "nnz": result["nnz"],
            "us": {row["kernel"]: round(row["us"], 3) for row in result["candidates"] if row.get("status") == "ok"}}


def tune(A, *, k: int | None = None, budget_ms: float = plan_tune.BUDGET_MS, max_calls: int = plan_tune.MAX_CALLS,
         persist: bool = True, seed: int = X_SEED) -> dict:
    """Time the candidate SpMV kernels on A (or SpMM kernels at ``k`` columns) and make the
    fastest what ``auto`` runs.

    Parameters
    ----------
    A : CSRMatrix, scipy.sparse or cupyx.scipy.sparse matrix
        Tuned in its value dtype; moved to the GPU (the copy cached on A).
    k : int, optional
        Tune ``spla.spmm`` for X of k columns (``auto`` then runs the winner
        on A at that k; each k is tuned on its own). None (or 1, since
        SpMM's auto runs the SpMV at k = 1) tunes ``spla.spmv``.
    budget_ms : float
        Device time the timed launches may take (see the module notes).
    max_calls : int
        Timed launches the tuner may always take, however long they run.
    persist : bool
        Also record the winner in the tuning cache
        (:func:`spla.planning.tune.cache_path`), so ``auto`` picks it in
        later processes.
    seed : int
        Seed of the x (or X) the candidates run on.

    Returns
    -------
    dict
        ``kernel`` (the winner, now ``auto``'s choice for A), ``rule`` (the
        rule's choice), ``speedup_vs_rule``, ``candidates`` (one dict per
        kernel: ``status`` "ok", "wrong", "failed" or "pruned";
        ``error`` scaled by |A||x|; ``us``, the median device time per call,
        and ``rounds_us``), ``calls`` (products run) and ``device_ms`` spent,
        ``k`` (None for the SpMV), ``gpu``, ``fingerprint`` and ``persisted``.

    Raises
    ------
    NoGPUError
        Without CuPy or a GPU.
    InputError
        For k < 1.
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
    >>> spla.tune(A, k=32)["kernel"]  # doctest: +SKIP
    'fused'
    """
    if k is not None and (not isinstance(k, numbers.Integral) or k < 1):
        raise InputError(f"k must be a positive integer (columns of X), got {k!r}")
    cupy = _device.require_cupy()
    caller = as_csr(A)
    dev = caller.to_device()
    gpu = _device.device_name()
    rng = np.random.default_rng(seed)
    spmm_k = None if k is None or k == 1 else int(k)
    products = _SpmvProducts(dev, rng) if spmm_k is None else _SpmmProducts(dev, spmm_k, rng)
    names = products.names
    rule = names[0]
    dtype = dev.dtype
    rows: dict[str, dict] = {name: products.row(name) for name in names}
    result: dict = {"rule": rule, "k": spmm_k, "gpu": gpu,
                    "dtype": dtype.name, "index_dtype": dev.index_dtype.name, "shape": list(dev.shape),
                    "nnz": dev.nnz, "budget_ms": budget_ms, "max_calls": max_calls}

    try:
        reference = products.bind(rule)().copy()
    except Exception as exc:
        raise SplaError(f"tuning needs the rule's kernel {rule!r}, which failed on this matrix: {exc}") from exc
    finite = cupy.isfinite(reference)
    magnitude = products.magnitude(finite) or 1.0

    runs, calls = {}, 0
    for name in names:
        row = rows[name]
        try:
            run = products.bind(name)
            products.out.fill(np.nan)  # a row the kernel skips fails the check
            y = run()
            # NaN/Inf (from NaN/Inf in A) must sit where the rule's result has them; the rest is measured
            if not bool(cupy.array_equal(cupy.isfinite(y), finite)):
                row["error"] = float("inf")
            else:
                difference = y[finite].astype(np.float64) - reference[finite].astype(np.float64)
                row["error"] = float(cupy.linalg.norm(difference)) / magnitude
        except Exception as exc:  # noqa: BLE001  (one broken candidate must not sink tuning)
            row.update(status="failed", message=f"{type(exc).__name__}: {exc}")
            continue
        calls += 1
        # two correct results can each be a tolerance away from the exact product
        if not check.passes(row["error"] / 2, dtype):
            row["status"] = "wrong"
            continue
        row["status"] = "ok"
        runs[name] = run
    if rule not in runs:
        raise SplaError(f"the rule's kernel {rule!r} failed its own check on this matrix")

    winner, race_calls, spent_ms = _race(runs, rows, rule, budget_ms, max(0, max_calls - calls))
    result.update(kernel=winner, source="measured", speedup_vs_rule=rows[rule]["us"] / rows[winner]["us"],
                  candidates=[rows[n] for n in names], calls=calls + race_calls, device_ms=spent_ms)
    # the matrices keep this very dict, so they see the two fields set last
    result["fingerprint"], result["persisted"] = products.record(
        {id(m): m for m in (dev, caller)}.values(), winner, result, persist, gpu)
    return result


def _race(runs: dict, rows: dict, rule: str, budget_ms: float, calls_left: int) -> tuple[str, int, float]:
    """Time the checked candidates in rounds and name the winner: (winner, calls, device ms).

    One launch each estimates; candidates over :data:`PRUNE_FACTOR` times the fastest estimate
    are pruned (the rule never is); the rest run :data:`ROUNDS` rounds in rotating order, with
    enough launches a round to spend ``calls_left`` calls or ``budget_ms``, whichever is more.
    A candidate that cannot be timed this way (it synchronises with the host) is marked failed."""
    estimate, calls, spent_ms = {}, 0, 0.0
    for name, run in runs.items():
        try:
            estimate[name] = _device_ms(run, 1)
        except SplaError as exc:
            if name == rule:
                raise
            rows[name].update(status="failed", message=f"cannot be timed: {exc}")
            continue
        spent_ms += estimate[name]
        calls += 1
    best = min(estimate.values())
    timed = [n for n in estimate if n == rule or estimate[n] <= PRUNE_FACTOR * best]
    for name in estimate:
        if name not in timed:
            rows[name]["status"] = "pruned"
            rows[name]["us"] = estimate[name] * 1e3
    per_round_ms = sum(estimate[n] for n in timed)
    by_time = int(max(0.0, budget_ms - spent_ms) / max(per_round_ms / len(timed), 1e-6))
    launches = min(MAX_LAUNCHES, max(calls_left - calls, by_time))
    reps = max(1, launches // (ROUNDS * len(timed)))
    samples: dict[str, list] = {n: [] for n in timed}
    for r in range(ROUNDS):
        order = timed[r % len(timed):] + timed[:r % len(timed)]  # rotate: no kernel always runs first
        for name in order:
            ms = _device_ms(runs[name], reps)
            samples[name].append(ms * 1e3)
            spent_ms += ms * reps
            calls += reps
    for name in timed:
        rows[name].update(us=statistics.median(samples[name]), rounds_us=samples[name])
    fastest = min(timed, key=lambda n: rows[n]["us"])
    winner = fastest if rows[fastest]["us"] < (1 - TIE_MARGIN) * rows[rule]["us"] else rule
    return winner, calls, spent_ms


def format_tune(result: dict) -> str:
    """A tuning result as text: one line per candidate, the winner marked."""
    what = "SpMVs" if result.get("k") is None else f"SpMMs at k = {result['k']}"
    lines = [f"tuned {result['shape'][0]}x{result['shape'][1]}, {result['nnz']:,} nnz, {result['dtype']} on "
             f"{result['gpu']}: {result['kernel']} ({result['speedup_vs_rule']:.2f}x the rule's {result['rule']}; "
             f"{result['calls']} {what}, {result['device_ms']:.1f} ms)"]
    for row in result["candidates"]:
        mark = "*" if row["kernel"] == result["kernel"] else " "
        timing = f"{row['us']:9.2f} us" if "us" in row else " " * 12
        lines.append(f" {mark} {row['kernel']:<14} {timing}  {row.get('status', '')}")
    return "\n".join(lines)
