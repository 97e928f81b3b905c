"""Benchmark hooks for the solvers' GPU iterations (``scripts/bench_precond.py``).

A captured CG solve replays a CUDA graph of two iterations; to say how close the
replay comes to the device time of the kernels themselves, those kernels are
launched back to back behind a held stream
(:func:`spla.backends.cuda.timing.queued_device_seconds`). The launches are taken
from the solver itself, so what is timed is what the graph holds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..linalg import _krylov


@dataclass(frozen=True)
class RecordedIterations:
    """What a captured CG solve put into its CUDA graph."""

    launches: Callable[[], None]  # queues two iterations' kernels on the current stream
    fused: bool  # the iterations run the fused CG product (else SpMV, dot and direction apart)


def cg_iteration_launches(A, b, *, M=None, fused: bool = True, warmup: int = 8) -> RecordedIterations | None:
    """The launches a captured ``spla.linalg.cg`` solve of ``A x = b`` records into its CUDA
    graph, on the buffers of a short solve (``warmup`` iterations, rtol 0) that ran first:
    each call of ``launches`` runs two more iterations of it. None where the solve does not
    capture (the CPU, or a capture refused).

    ``fused=False`` takes them from a solve without the fused CG product (the separate SpMV,
    dot and direction launches), to compare the two on the same matrix.
    """
    recorded: list = []
    products: list = []
    capture, fused_product, fused_loop = _krylov._capture, _krylov._fused_product, _krylov._fused_loop

    def recording(xp, launches):
        graph = capture(xp, launches)
        if graph is not None:
            recorded.append(launches)
        return graph

    def product(system, K):
        products.append(fused_product(system, K) if fused else None)
        return products[-1]

    # the graph path even where the one-launch loop would take the solve
    _krylov._capture, _krylov._fused_product, _krylov._fused_loop = recording, product, lambda *args: None
    try:
        _krylov.cg(A, b, rtol=0.0, maxiter=max(int(warmup), 4), M=M, capture=True)
    finally:
        _krylov._capture, _krylov._fused_product, _krylov._fused_loop = capture, fused_product, fused_loop
    if not recorded:
        return None
    return RecordedIterations(recorded[0], fused=bool(products) and products[0] is not None)
