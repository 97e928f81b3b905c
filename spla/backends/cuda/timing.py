"""Device time of calls that cannot be graph-captured: queue them behind a held stream.

Timing back-to-back calls between two events measures the host, not the
device, once a call's kernel is shorter than its launch cost from Python (most
matrices under ~1M nnz). A CUDA graph removes the host, but cuSPARSE's calls
through CuPy cannot be captured. So both sides are timed the way nvbench times
what it cannot capture: a kernel holds the stream until the host raises a flag
in pinned memory; the calls are queued behind it; the flag is raised and the
events around the queued calls see only device time (the launches were already
waiting, so no gap is the host's).
"""

from __future__ import annotations

import ctypes
import time

import numpy as np

from ...device import require_cupy
from ...errors import SplaError
from .runtime import KernelSource

WAIT_SOURCE = KernelSource("bench_wait.cu", ["spla_wait_flag"])

# CUDA blocks a launch once its queue of pending work is full, and one cuSPARSE
# call queues several launches: 256 calls of a small matrix filled it (the host
# then waited on the stream it was holding, until the timeout). Batches of 64
# calls stay well below; each batch is timed on its own and the times summed.
MAX_QUEUED = 64
TIMEOUT_S = 2.0


def queued_device_seconds(fn, calls: int, timeout_s: float = TIMEOUT_S) -> float:
    """Device time of one ``fn()`` (launches on CuPy's current stream): ``calls`` calls queued
    behind a held stream in batches of at most :data:`MAX_QUEUED`, released at once and timed
    between two events. ``fn`` must not synchronise (SplaError if the hold timed out)."""
    cupy = require_cupy()
    stream = cupy.cuda.get_current_stream()
    wait = WAIT_SOURCE.function("spla_wait_flag")
    flag_memory = cupy.cuda.alloc_pinned_memory(4)  # mapped: the kernel reads the host's write (UVA)
    flag = ctypes.c_int.from_address(flag_memory.ptr)
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    calls = max(1, int(calls))
    total, left = 0.0, calls
    while left:
        batch = min(left, MAX_QUEUED)
        flag.value = 0
        wait((1,), (1,), (np.uint64(flag_memory.ptr), np.uint64(timeout_s * 1e9)))  # on the current stream
        start.record(stream)
        began = time.perf_counter()
        for _ in range(batch):
            fn()
        stop.record(stream)
        queued_s = time.perf_counter() - began
        flag.value = 1
        stop.synchronize()
        if queued_s > 0.8 * timeout_s:
            raise SplaError(f"queueing {batch} calls took {queued_s:.2f} s: the call synchronises with the "
                            "host, so its device time cannot be separated from the host's")
        total += cupy.cuda.get_elapsed_time(start, stop) / 1e3
        left -= batch
    return total / calls
