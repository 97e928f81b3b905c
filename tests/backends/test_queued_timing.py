"""The held-stream device timer (spla.backends.cuda.timing) against graph replay, on the GPU."""

from __future__ import annotations

import time

import numpy as np
import pytest

import spla
from spla.errors import SplaError

pytestmark = pytest.mark.gpu


def _graph_seconds(cupy, fn, calls):
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        for _ in range(calls):
            fn()
        graph = stream.end_capture()
        graph.launch(stream)
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record(stream)
        graph.launch(stream)
        stop.record(stream)
        stop.synchronize()
    return cupy.cuda.get_elapsed_time(start, stop) / 1e3 / calls


def test_queued_time_is_device_time_not_host_time():
    import cupy

    from spla.backends.cuda.timing import queued_device_seconds

    A = spla.load("gen:poisson2d:64").to_device()  # a kernel of ~2 us, far below its launch cost
    x = cupy.ones(A.n_cols)
    out = cupy.empty(A.n_rows)

    def call():
        return spla.spmv(A, x, out=out)

    call()
    with cupy.cuda.Stream(non_blocking=True):
        queued = queued_device_seconds(call, 200)
    graph = _graph_seconds(cupy, call, 200)
    cupy.cuda.get_current_stream().synchronize()
    began = time.perf_counter()
    for _ in range(200):
        call()
    cupy.cuda.get_current_stream().synchronize()
    host = (time.perf_counter() - began) / 200
    assert queued < 0.7 * host, (queued, host)  # the host's launch cost is not in it
    assert 0.5 * graph < queued < 2.5 * graph, (queued, graph)  # graph replay has smaller gaps
    np.testing.assert_allclose(cupy.asnumpy(out), A.to_host() @ np.ones(A.n_cols))


def test_a_call_that_synchronises_is_refused():
    import cupy

    from spla.backends.cuda.timing import queued_device_seconds

    def syncing():
        cupy.cuda.get_current_stream().synchronize()

    with pytest.raises(SplaError, match="synchronises"):
        queued_device_seconds(syncing, 2, timeout_s=0.2)


def test_queued_time_of_many_small_cusparse_calls():
    """cuSPARSE queues several launches a call: hundreds of calls must not fill the launch queue."""
    import cupy

    from spla.backends.cuda.cusparse import spmv_anchor
    from spla.backends.cuda.timing import queued_device_seconds

    A = spla.load("gen:poisson2d:64").to_device()
    x = cupy.ones(A.n_cols)
    anchor = spmv_anchor(A)
    out = anchor(x)
    with cupy.cuda.Stream(non_blocking=True):
        seconds = queued_device_seconds(lambda: anchor(x, out), 1000)
    assert 0 < seconds < 50e-6, seconds
    np.testing.assert_allclose(cupy.asnumpy(out), A.to_host() @ np.ones(A.n_cols))
