"""CUDA-graph capture of spla's launches: an SpMV, and a CG-like sequence of
SpMVs and in-place axpys, captured on a stream and replayed with new inputs,
for every kernel family (the structured ones on matrices of their structure). The first call binds outside the
capture (binding allocates and uploads); captured calls only launch."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_matches_scipy

import spla
from spla.bench import corpus
from spla.io import generators
from spla.planning.spmv import SPLA_KERNELS

pytestmark = pytest.mark.gpu
cupy = pytest.importorskip("cupy")

# spla's own launches only: CuPy refuses cuSPARSE calls during stream capture, so the anchor cannot
# be captured (spla.bench.spmv times it with a plain launch loop instead)
KERNELS = [*SPLA_KERNELS, "warp:4", "segmented:4", "auto", "tune"]
MATRICES = ("empty-rows", "mixed-lengths", "stencil27")


@pytest.fixture(autouse=True)
def private_tuning_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SPLA_TUNE_CACHE", str(tmp_path / "tune.json"))


def _axpy():
    return cupy.ElementwiseKernel("T a, T x", "T y", "y += a * x", "spla_test_axpy_inplace")


def _replays(A, kernel, rng):
    S = A.to_scipy()
    x = cupy.asarray(rng.uniform(-1, 1, A.n_cols))
    y = cupy.empty(A.n_rows)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        spla.spmv(A, x, kernel=kernel, out=y)  # bind (and for tune, measure) outside the capture
        stream.synchronize()
        stream.begin_capture()
        try:
            spla.spmv(A, x, kernel=kernel, out=y)
        finally:
            graph = stream.end_capture()
        for _ in range(2):  # new inputs each replay: the graph reads x, writes y
            x[...] = cupy.asarray(rng.uniform(-1, 1, A.n_cols))
            y.fill(np.nan)
            graph.launch(stream)
            stream.synchronize()
            assert_matches_scipy(y, S @ x.get(), dtype=np.float64)


@pytest.mark.parametrize("matrix", MATRICES)
@pytest.mark.parametrize("kernel", KERNELS)
def test_spmv_replays_from_a_graph(kernel, matrix, rng):
    _replays(corpus.build(matrix, 60_000), kernel, rng)


# the structured kernels, each on a matrix of its structure (detection and binding outside the capture)
@pytest.mark.parametrize("kernel,build", [("dia", lambda: generators.poisson3d(12)),
                                          ("band", lambda: generators.banded(5000, 12)),
                                          ("band:2", lambda: corpus.build("banded-random", 60_000)),
                                          ("rle", lambda: corpus.build("block-sparse", 60_000))],
                         ids=["dia", "band", "band:2", "rle"])
def test_structured_kernels_replay_from_a_graph(kernel, build, rng):
    _replays(build(), kernel, rng)


@pytest.mark.parametrize("kernel", KERNELS)
def test_cg_like_sequence_replays_from_a_graph(kernel, rng):
    A = generators.poisson2d(60)
    S = A.to_scipy()
    axpy = _axpy()
    n = A.n_rows
    p0, r0, x0 = (rng.uniform(-1, 1, n) for _ in range(3))
    p, r, x = cupy.asarray(p0), cupy.asarray(r0), cupy.asarray(x0)
    q, s = cupy.empty(n), cupy.empty(n)
    a = np.float64(0.25)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        spla.spmv(A, p, kernel=kernel, out=q)  # bind and compile outside the capture
        axpy(a, p, cupy.zeros(n))
        p[...] = cupy.asarray(p0)
        stream.synchronize()
        stream.begin_capture()
        try:
            spla.spmv(A, p, kernel=kernel, out=q)  # q = A p
            axpy(a, p, x)                          # x += a p
            axpy(-a, q, r)                         # r -= a q
            spla.spmv(A, r, kernel=kernel, out=s)  # s = A r
            axpy(a, s, p)                          # p += a s
        finally:
            graph = stream.end_capture()
        for _ in range(3):
            graph.launch(stream)
        stream.synchronize()
    pw, rw, xw = p0.copy(), r0.copy(), x0.copy()
    for _ in range(3):
        qw = S @ pw
        xw += a * pw
        rw -= a * qw
        sw = S @ rw
        pw += a * sw
    for got, want in ((x, xw), (r, rw), (p, pw), (q, qw), (s, sw)):
        assert_matches_scipy(got, want, dtype=np.float64)


@pytest.mark.parametrize("kernel", ["auto", "dia", "subwarp", "warp", "regk", "fused", "adaptive"])
def test_spmm_replays_from_a_graph(kernel, rng):
    """spla.spmm's hot path captured: two calls outside the capture bind the launcher and pack a
    single kernel's launch, the captured call only launches; replays read X's new contents."""
    A = generators.poisson2d(60)
    S = A.to_scipy()
    X = cupy.asarray(rng.uniform(-1, 1, (A.n_cols, 8)))
    Y = cupy.empty((A.n_rows, 8))
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        for _ in range(2):
            spla.spmm(A, X, out=Y, alpha=2.0, kernel=kernel)
        stream.synchronize()
        stream.begin_capture()
        try:
            spla.spmm(A, X, out=Y, alpha=2.0, kernel=kernel)
        finally:
            graph = stream.end_capture()
        for _ in range(2):
            X[...] = cupy.asarray(rng.uniform(-1, 1, X.shape))
            Y.fill(np.nan)
            graph.launch(stream)
            stream.synchronize()
            for c in range(X.shape[1]):
                assert_matches_scipy(Y[:, c], 2.0 * (S @ X[:, c].get()), dtype=np.float64)
