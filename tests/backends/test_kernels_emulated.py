"""What spla's kernels compute, on a machine without a GPU: each kernel file of kernels/ is
compiled by g++ with CUDA's built-ins emulated (cuda_emulator.py) and launched by the real host
path (SpMV's plans, launchers and packed arguments; SpMM's, gemv's, GEMM's, the structure passes'
and the solvers' launches) through the stand-in CuPy of fake_cupy.py.

The inputs are whole numbers small enough that every sum is exact in the value type, so a kernel
must give the float64 result exactly whatever order it adds in: a product dropped, read twice or
written to the wrong row fails. Real values then check the kernels' promises about bits: the same
whatever order blocks start in and their threads run in, and the same from staged's paths (one
launch or two, column indices or narrow offsets). None of this replaces the GPU suite (no memory
ordering, no speed); it catches a kernel's logic errors where no GPU is lent.
"""

from __future__ import annotations

import cuda_emulator
import fake_cupy
import numpy as np
import pytest
import scipy.sparse as sp
from fake_cupy import FakeArray

from spla import csr_passes
from spla.backends.cuda.runtime import template
from spla.csr import CSRMatrix
from spla.io import generators
from spla.ops import spmv as ops_spmv
from spla.planning import blocked, segmented

pytestmark = pytest.mark.skipif(not cuda_emulator.available(), reason=f"needs {cuda_emulator.COMPILER}")

KERNELS = ["scalar", "warp", "warp:2", "vector", "vector:4", "adaptive", "adaptive2", "segmented",
           "segmented:4", "staged", "staged:8", "staged:16", "blocked", "blocked:4"]
# whole numbers whose products and row sums (rows up to 12,000 here) stay exact: under 2^24 in
# float32, 2^53 in float64
WHOLE = {np.float32: 15, np.float64: 1000}


@pytest.fixture
def emulated(monkeypatch):
    """The stand-in CuPy, running each launch on the CPU; ``emulated.seed`` orders the blocks and
    threads (1 by default: shuffled; 0 runs them in order)."""
    state = type("Emulated", (), {"seed": 1})()

    def run(source, name, grid, block, shared_mem, params, cooperative=False):
        cuda_emulator.launch(source, name, grid, block, shared_mem, params, seed=state.seed, cooperative=cooperative)

    state.launches = fake_cupy.install(monkeypatch, emulate=run)
    # blocked's regrouping is array operations the stand-in lacks: NumPy's, the same code CuPy runs
    # (tests/planning/test_blocked.py checks it), on the stand-in arrays' host copies
    regroup = csr_passes.column_blocks
    monkeypatch.setattr(csr_passes, "column_blocks", lambda indptr, indices, data, *args: tuple(
        FakeArray(a) for a in regroup(indptr.get(), indices.get(), data.get(), *args)))
    return state


def _rows(lengths, n_cols, rng, local=False):
    """A CSR pattern with rows of ``lengths`` (distinct sorted columns): anywhere in n_cols, or
    (``local``) within a window that moves down the matrix, as a mesh's rows are."""
    indptr = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    indices = np.empty(indptr[-1], dtype=np.int64)
    for r, n in enumerate(lengths):
        if local:
            start = min(r * n_cols // len(lengths), n_cols - max(n, 64))
            span = np.arange(start, start + max(n, 64))
        else:
            span = n_cols
        indices[indptr[r]:indptr[r + 1]] = np.sort(rng.choice(span, n, replace=False))
    return indptr, indices, (len(lengths), n_cols)


def _shape(name, rng):
    """(indptr, indices, shape) of one of the matrices that reach the kernels' paths."""
    if name == "mixed":  # short, empty, split and warp-listed rows, cut across tiles
        lengths = rng.integers(0, 20, 400)
        lengths[3], lengths[50], lengths[399] = 9000, 700, 0
        return _rows(lengths, 100_000, rng)
    if name == "rows-32":  # rows of one even length: staged's bank offsets
        return _rows(np.full(500, 32), 20_000, rng, local=True)
    if name in ("rows-16-and-64", "rows-cut-by-tiles"):
        lengths = np.tile([16, 64, 16, 16], 150)
        if name == "rows-cut-by-tiles":
            lengths[::7] += 300  # rows that staged's tiles cut
        return _rows(lengths, 20_000, rng, local=True)
    if name == "one-long-row":  # a row over many tiles among short ones
        lengths = rng.integers(1, 6, 300)
        lengths[150] = 12_000
        return _rows(lengths, 50_000, rng)
    if name == "empty-edges":  # empty rows first, last and in runs between
        lengths = rng.integers(0, 40, 700)
        lengths[:40], lengths[-60:], lengths[300:400] = 0, 0, 0
        return _rows(lengths, 3_000, rng)
    if name == "one-entry":
        return np.array([0, 1]), np.array([0]), (1, 1)
    if name == "wide":  # few rows of thousands over many columns
        return _rows(np.array([5000, 3000, 7000]), 200_000, rng)
    if name == "tile-edges":  # rows that end exactly where tiles of 1,024, 2,048 and 4,096 end
        return _rows(np.array([1024, 1024, 0, 2048, 1, 1023, 4096, 512, 512, 3, 0]), 10_000, rng)
    if name == "no-entries":  # rows, none stored
        return np.zeros(301, dtype=np.int64), np.zeros(0, dtype=np.int64), (300, 50)
    raise ValueError(name)


SHAPES = ["mixed", "rows-32", "rows-16-and-64", "one-long-row", "empty-edges", "one-entry", "wide", "tile-edges",
          "no-entries"]


def _device(indptr, indices, data, shape, index_dtype=np.int32):
    """A stand-in device matrix (and its host twin) of these arrays."""
    H = CSRMatrix.from_scipy(sp.csr_matrix((data, indices, indptr), shape=shape), dtype=data.dtype,
                             index_dtype=index_dtype)
    A = CSRMatrix(FakeArray(H.data), FakeArray(H.indices), FakeArray(H.indptr), H.shape, index_dtype=index_dtype,
                  validate=False)
    assert A.index_dtype == index_dtype  # (without it, indices that fit int32 would be cast to it)
    return A, H


def _whole(rng, dtype, n):
    """Whole numbers in [-m, m], none zero (a zero would hide the product it multiplies)."""
    m = WHOLE[dtype]
    values = rng.integers(1, m + 1, n) * rng.choice([-1, 1], n)
    return values.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", SHAPES)
@pytest.mark.parametrize("kernel", KERNELS)
def test_kernel_gives_the_exact_product(emulated, rng, kernel, name, dtype):
    indptr, indices, shape = _shape(name, rng)
    index_dtype = np.int64 if name in ("mixed", "empty-edges") else np.int32
    A, H = _device(indptr, indices, _whole(rng, dtype, len(indices)), shape, index_dtype)
    x = _whole(rng, dtype, shape[1])
    want = H.to_scipy().astype(np.float64) @ x.astype(np.float64)
    got = ops_spmv.spmv(A, FakeArray(x), kernel=kernel).get()  # into cupy.empty's NaNs: y is never read
    assert emulated.launches, "the kernel ran"
    assert got.dtype == dtype and np.array_equal(got, want), (
        f"{kernel} on {name}: {np.count_nonzero(got != want)} of {shape[0]} rows wrong, "
        f"first at {np.flatnonzero(got != want)[:5]}")


@pytest.mark.parametrize("kernel", KERNELS)
def test_kernel_scales_and_adds_y(emulated, rng, kernel):
    indptr, indices, shape = _shape("mixed", rng)
    A, H = _device(indptr, indices, _whole(rng, np.float64, len(indices)), shape)
    x = _whole(rng, np.float64, shape[1])
    y = 2 * _whole(rng, np.float64, shape[0])  # even, so beta's half of it is exact
    want = 3 * (H.to_scipy() @ x) + 0.5 * y
    got = ops_spmv.spmv(A, FakeArray(x), y=(out := FakeArray(y)), out=out, alpha=3.0, beta=0.5, kernel=kernel)
    assert np.array_equal(got.get(), want)


@pytest.mark.parametrize("name", ["mixed", "rows-16-and-64", "one-long-row"])
@pytest.mark.parametrize("kernel", KERNELS)
def test_bits_do_not_depend_on_the_order_blocks_and_threads_run_in(emulated, rng, kernel, name):
    """Real values, rounded on every add: blocks start in shuffled orders, a few at a time, and
    their threads run in shuffled orders between barriers, as they may on the GPU; every order
    must give the same bits. Each order runs on a fresh copy of the matrix, whose buffers (cut
    rows' partial sums, counters) hold no values of an earlier call to hide a read too early."""
    indptr, indices, shape = _shape(name, rng)
    data = rng.standard_normal(len(indices)).astype(np.float32)
    x = FakeArray(rng.standard_normal(shape[1]).astype(np.float32))
    results = []
    for seed in (0, 1, 2):
        emulated.seed = seed
        A, _ = _device(indptr, indices, data, shape)
        results.append(ops_spmv.spmv(A, x, kernel=kernel).get().view(np.uint8))
        assert np.array_equal(results[-1], results[0]), f"seed {seed}"


@pytest.mark.parametrize("blocks", [2, 7, 64])
@pytest.mark.parametrize("name", SHAPES)
def test_blocked_gives_the_exact_product_over_several_blocks(emulated, rng, monkeypatch, name, blocks):
    """blocked with blocks narrow enough that these matrices take several (as many as their
    columns allow), over float64 whole numbers, plus alpha and beta: its staged launch over the
    regrouped copy and its sum of each row's blocks."""
    indptr, indices, shape = _shape(name, rng)
    monkeypatch.setattr(blocked, "BLOCK_COLUMNS", -(-shape[1] // blocks))
    A, H = _device(indptr, indices, _whole(rng, np.float64, len(indices)), shape)
    x = _whole(rng, np.float64, shape[1])
    y = 2 * _whole(rng, np.float64, shape[0])
    want = 3 * (H.to_scipy() @ x) + 0.5 * y
    got = ops_spmv.spmv(A, FakeArray(x), y=(out := FakeArray(y)), out=out, alpha=3.0, beta=0.5, kernel="blocked")
    assert np.array_equal(got.get(), want)
    found = A._cache[blocked.REGROUPED_KEY]
    assert found.matrix.nnz == A.nnz and found.pair_ptr.get()[-1] == found.matrix.n_rows
    assert emulated.launches[-1][0].startswith("spla_spmv_blocked<double, int")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_staged_paths_give_the_same_bits(emulated, rng, monkeypatch, dtype):
    """staged's cut rows finished in the kernel (counters) or by its finish launch, and its
    columns read as indices or as narrow offsets, give one result, and the counters are left zero."""
    indptr, indices, shape = _shape("rows-cut-by-tiles", rng)
    data = rng.standard_normal(len(indices)).astype(dtype)
    x = FakeArray(rng.standard_normal(shape[1]).astype(dtype))
    T = 4
    results = {}
    for one_launch in (True, False):
        for narrow in (True, False):
            monkeypatch.setattr(segmented, "STAGED_ONE_LAUNCH_CUT", 10**6 if one_launch else 0)
            monkeypatch.setattr(segmented, "STAGED_NARROW", (np.dtype(dtype).name,) if narrow else ())
            A, _ = _device(indptr, indices, data, shape)
            before = len(emulated.launches)
            results[one_launch, narrow] = ops_spmv.spmv(A, x, kernel=f"staged:{T}").get()
            names = [launch[0] for launch in emulated.launches[before:]]
            assert ("_narrow<" in names[0]) == narrow and len(names) == (1 if one_launch else 2), names
            counters = A._cache[("staged-state", T, 0, np.dtype(dtype).str)][3][1]
            if one_launch:
                assert not counters.get().any(), "counters are left zero for the next call"
    first = results[True, True]
    assert all(np.array_equal(r.view(np.uint8), first.view(np.uint8)) for r in results.values())


def _dia_on_device(A, host, palette: bool, monkeypatch):
    """dia's structure (and its palette, or None) found on the host and handed to the stand-in
    device matrix A (the detection itself runs on the GPU)."""
    from spla.planning import dia

    host.refresh()  # a structure of its own each time: a palette gives the values back
    found = dia.structure(host)
    monkeypatch.setattr(dia, "PALETTE_MIN_BYTES", 0)  # these are small
    A._cache["dia"] = dia.Structure(FakeArray(found.offsets), FakeArray(found.values), found.n_diagonals)
    coded = dia.palette(host, found) if palette else None
    assert coded is not None or not palette
    A._cache["dia-palette"] = coded and dia.Palette(FakeArray(coded.codes), FakeArray(coded.table))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kernel", ["dia", "dia:1", "dia-palette", "dia-palette:1", "band", "band:2", "band:16",
                                    "rle", "rle:2", "rle:16"])
def test_structured_kernel_gives_the_exact_product(emulated, rng, monkeypatch, kernel, dtype):
    """dia (over its values and over a palette's codes), band and rle, their structure found on the
    host: a 2-D stencil with rows cut at the grid's edges, a band whose rows change width, and rows
    of runs (:func:`_rows_of_runs`)."""
    from spla.planning import band, rle

    family, palette = kernel.split(":")[0].removesuffix("-palette"), "-palette" in kernel
    kernel = kernel.replace("-palette", "")
    if family == "dia":
        pattern = generators.poisson2d(37).to_scipy()
    elif family == "rle":
        pattern = _rows_of_runs(rng)
    else:
        pattern = generators.banded(500, 7).to_scipy().tolil()
        pattern[200, 190:215] = 1  # a wider row in the band
        pattern = pattern.tocsr()
    # the pattern's own arrays (from_scipy would sort _rows_of_runs's row out of order)
    host = CSRMatrix(pattern.data.astype(dtype), pattern.indices, pattern.indptr, pattern.shape)
    # (a palette's matrix: 40 whole numbers at most)
    host.data[:] = rng.choice(_whole(rng, dtype, 40), host.nnz) if palette else _whole(rng, dtype, host.nnz)
    A, _ = _device(host.indptr, host.indices, host.data, host.shape)
    if family == "dia":
        _dia_on_device(A, host, palette, monkeypatch)
    elif family == "rle":
        found = rle.structure(host)
        A._cache["rle"] = rle.Structure(FakeArray(found.run_ptr), FakeArray(found.run_start), FakeArray(found.run_col))
    else:
        A._cache["band"] = band.Structure(FakeArray(band.structure(host).first))
    x = _whole(rng, dtype, host.shape[1])
    got = ops_spmv.spmv(A, FakeArray(x), kernel=kernel).get()
    assert emulated.launches[-1][0].startswith(f"spla_spmv_{family}{'_palette' if palette else ''}<")
    assert np.array_equal(got, host.to_scipy().astype(np.float64) @ x.astype(np.float64))


@pytest.mark.parametrize("lanes", [2, 4, 8])
@pytest.mark.parametrize("family, dtype", [("band", np.float32), ("band", np.float64), ("rle", np.float32)])
def test_rotated_loads_give_the_plain_orders_bits(emulated, rng, family, dtype, lanes):
    """Rows of exactly 32 entries start on one L1 bank, so band (float32 and float64) and rle (float32)
    run their entries that rotate the rows' value loads (spla.planning.banks.rotates); the sums keep
    their order, so the product is warp's, bit for bit, on values that round (not whole numbers).
    rle's rows are two runs of 16 at random columns, band's one run from a random column."""
    from spla.planning import band, banks, rle

    n_rows, n_cols = 64, 4000
    if family == "rle":
        starts = np.sort(rng.choice(n_cols // 20 - 1, (n_rows, 2), replace=False), axis=1) * 20
        indices = (starts[:, :, None] + np.arange(16)).reshape(n_rows, 32).ravel()
    else:
        indices = (rng.integers(0, n_cols - 32, n_rows)[:, None] + np.arange(32)).ravel()
    host = CSRMatrix(rng.uniform(-1, 1, n_rows * 32).astype(dtype), indices, np.arange(n_rows + 1) * 32,
                     (n_rows, n_cols))
    A, _ = _device(host.indptr, host.indices, host.data, host.shape)
    if family == "rle":
        found = rle.structure(host)
        A._cache["rle"] = rle.Structure(FakeArray(found.run_ptr), FakeArray(found.run_start), FakeArray(found.run_col))
    else:
        A._cache["band"] = band.Structure(FakeArray(band.structure(host).first))
    assert banks.rotates(A, family, lanes)
    x = FakeArray(rng.uniform(-1, 1, n_cols).astype(dtype))
    got = ops_spmv.spmv(A, x, kernel=f"{family}:{lanes}").get()
    assert emulated.launches[-1][0].startswith(f"spla_spmv_{family}_rotated<")
    assert np.array_equal(got, ops_spmv.spmv(A, x, kernel=f"warp:{lanes}").get())


def _rows_of_runs(rng) -> sp.csr_matrix:
    """Rows of 0-12 runs of 1-9 consecutive columns (every lane width's unrolled steps and its
    tail), an empty row, a row whose last column runs on into the next row's first, a row of 128
    entries in 16 runs, and one row out of order (the encoding does not need sorted rows)."""
    n_rows, n_cols = 300, 3000
    rows = []
    for _ in range(n_rows):
        starts = np.sort(rng.choice(n_cols // 10, rng.integers(0, 13), replace=False)) * 10
        rows.append(np.concatenate([np.arange(c, c + rng.integers(1, 10)) for c in starts] or [np.zeros(0, int)]))
    rows[7] = np.zeros(0, dtype=int)
    rows[40], rows[41] = np.arange(90, 100), np.arange(100, 104)
    rows[150] = np.concatenate([np.arange(c, c + 8) for c in range(0, 2990, 199)])
    rows[200] = rows[200][::-1]
    indptr = np.concatenate(([0], np.cumsum([r.size for r in rows])))
    return sp.csr_matrix((np.ones(indptr[-1]), np.concatenate(rows), indptr), shape=(n_rows, n_cols))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dia_palette_gives_the_bits_of_the_values(emulated, rng, monkeypatch, dtype):
    """dia's palette entry reads a code a slot and its value from the block's table: the bits of the
    entry that reads the values, on real values of a 3-D stencil (three coefficients and a fourth
    on some rows, which a sample misses), with alpha and beta, at every rows a thread."""
    from spla.planning import dia

    host = generators.poisson3d(11).astype(dtype)
    host.data[:] = rng.choice(rng.standard_normal(3), host.nnz).astype(dtype)
    host.data[host.indptr[5]] = np.pi  # one value of its own
    x = FakeArray(rng.standard_normal(host.shape[1]).astype(dtype))
    y = rng.standard_normal(host.shape[0]).astype(dtype)
    for rows in dia.rows_choices(dtype):
        results = []
        for palette in (False, True):
            A, _ = _device(host.indptr, host.indices, host.data, host.shape)
            _dia_on_device(A, host, palette, monkeypatch)
            if palette:
                assert A._cache["dia-palette"].n_values == 4
            out = FakeArray(y.copy())
            results.append(ops_spmv.spmv(A, x, y=out, out=out, alpha=1.5, beta=-0.5, kernel=f"dia:{rows}").get())
            assert ops_spmv.bound_launcher(A, f"dia:{rows}").entry == ("_palette" if palette else "")
        assert np.array_equal(results[0].view(np.uint8), results[1].view(np.uint8))
        want = 1.5 * (host.to_scipy().astype(np.float64) @ x.get().astype(np.float64)) - 0.5 * y
        np.testing.assert_allclose(results[1], want, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-5)


@pytest.mark.parametrize("value", [1.0, -2.5], ids=["ones", "one-value"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_staged_reads_a_matrix_of_one_value_once_with_the_same_bits(emulated, rng, monkeypatch, dtype, value):
    """staged's _uniform entries (from the indices and from narrow offsets, in one launch and with
    the finish kernel) give the bits of the entries that read every value, and read data[0] alone:
    the device copy's other values are NaN here, and a read of one would show."""
    indptr, indices, shape = _shape("rows-cut-by-tiles", rng)
    x = FakeArray(rng.standard_normal(shape[1]).astype(dtype))
    y = rng.standard_normal(shape[0]).astype(dtype)
    for one_launch in (True, False):
        for narrow in (True, False):
            monkeypatch.setattr(segmented, "STAGED_ONE_LAUNCH_CUT", 10**6 if one_launch else 0)
            monkeypatch.setattr(segmented, "STAGED_NARROW", (np.dtype(dtype).name,) if narrow else ())
            results = []
            for uniform in (False, True):
                monkeypatch.setattr(segmented, "STAGED_UNIFORM", (np.dtype(dtype).name,) if uniform else ())
                A, _ = _device(indptr, indices, np.full(len(indices), value, dtype), shape)
                if uniform:
                    assert segmented.staged_uniform(A)  # checked on the values, then they are spoiled
                    A.data.a[1:] = np.nan
                out = FakeArray(y.copy())
                results.append(ops_spmv.spmv(A, x, y=out, out=out, alpha=1.5, beta=-0.5, kernel="staged:4").get())
                assert ops_spmv.bound_launcher(A, "staged:4").entry.endswith("_uniform") == uniform
            assert np.isfinite(results[1]).all()
            assert np.array_equal(results[0].view(np.uint8), results[1].view(np.uint8)), (one_launch, narrow)




@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_staged_palette_gives_the_bits_of_the_values(emulated, rng, monkeypatch, dtype):
    """staged's _palette entries (from the indices and from narrow offsets, in one launch and with the
    finish kernel) read a code a nonzero and its value from the block's table: the bits of the entries
    that read every value, with stored zeros of both signs among five values, and nothing read from the
    values themselves (NaN here once coded)."""
    from spla.planning import palette

    indptr, indices, shape = _shape("rows-cut-by-tiles", rng)
    stored = np.array([1.5, -2.25, 0.0, -0.0, 3.0], dtype)
    data = rng.choice(stored, len(indices))
    x = FakeArray(rng.standard_normal(shape[1]).astype(dtype))
    y = rng.standard_normal(shape[0]).astype(dtype)
    monkeypatch.setattr(segmented, "STAGED_PALETTE_MIN_BYTES", 0)
    for one_launch in (True, False):
        for narrow in (True, False):
            monkeypatch.setattr(segmented, "STAGED_ONE_LAUNCH_CUT", 10**6 if one_launch else 0)
            monkeypatch.setattr(segmented, "STAGED_NARROW", (np.dtype(dtype).name,) if narrow else ())
            results = []
            for coded in (False, True):
                monkeypatch.setattr(segmented, "STAGED_PALETTE", (np.dtype(dtype).name,) if coded else ())
                A, host = _device(indptr, indices, data.copy(), shape)
                if coded:  # found on the host (the pass's own test is above), then the values are spoiled
                    found = palette.find(host.data)
                    assert found.n_values == 4  # 0.0 is code 0's
                    A._cache["staged-palette"] = palette.Palette(FakeArray(found.codes), FakeArray(found.table))
                    assert not segmented.staged_uniform(A)  # (checked on the values, before they are spoiled)
                    A.data.a[:] = np.nan
                out = FakeArray(y.copy())
                results.append(ops_spmv.spmv(A, x, y=out, out=out, alpha=1.5, beta=-0.5, kernel="staged:4").get())
                assert ops_spmv.bound_launcher(A, "staged:4").entry.endswith("_palette") == coded
            assert np.isfinite(results[1]).all()
            assert np.array_equal(results[0].view(np.uint8), results[1].view(np.uint8)), (one_launch, narrow)


# ---- SpMM (kernels/spmm_*.cu), through their single launches (spla/backends/cuda/spmm_launch.py)

def _block(rng, dtype, rows, k, ld=None, colmajor=False):
    """A whole-number block X of rows x k as a kernel operand: row-major with ``ld`` >= k elements
    a row, or column-major with ``ld`` >= rows a column; and the same X as a NumPy array."""
    from spla.backends.cuda.spmm_launch import Operand

    X = _whole(rng, dtype, rows * k).reshape(rows, k)
    if colmajor:
        ld = ld or rows
        buffer = np.zeros((k, ld), dtype)
        buffer[:, :rows] = X.T
    else:
        ld = ld or k
        buffer = np.zeros((rows, ld), dtype)
        buffer[:, :k] = X
    return Operand(FakeArray(buffer), ld, colmajor), X


def _spmm_case(rng, dtype, name="mixed"):
    """A whole-number matrix (int64 indices in float64, int32 in float32: both kernels' index
    types) and its float64 SciPy twin."""
    indptr, indices, shape = _shape(name, rng)
    index_dtype = np.int64 if dtype == np.float64 else np.int32
    A, H = _device(indptr, indices, _whole(rng, dtype, len(indices)), shape, index_dtype)
    return A, H.to_scipy().astype(np.float64)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("colmajor", [False, True], ids=["rows", "columns"])
@pytest.mark.parametrize("sub", [1, 2, 8])
@pytest.mark.parametrize("k", [1, 3, 4, 13, 16])
def test_spmm_regk_gives_the_exact_product(emulated, rng, dtype, k, sub, colmajor):
    """regk (k columns in registers, SUB lanes a row) over X of either layout and a leading
    dimension past k (or n), with alpha, beta and Y, on all rows and on a list of rows."""
    from spla.backends.cuda import spmm_launch

    A, S = _spmm_case(rng, dtype, "empty-edges")
    x, X = _block(rng, dtype, S.shape[1], k, ld=(S.shape[1] + 3 if colmajor else k + 2), colmajor=colmajor)
    y, Y = _block(rng, dtype, S.shape[0], k, ld=k + 1)
    Y *= 2  # even, so beta's half of it is exact
    y.array.a[:, :k] = Y
    out = FakeArray(np.full((S.shape[0], k), np.nan, dtype))
    spmm_launch.launch_regk(A, x, k, out, y, 3.0, 0.5, sub=sub)
    assert np.array_equal(out.get(), 3 * (S @ X) + 0.5 * Y)
    rows = np.array([5, 0, 699, 41, 300], dtype=A.index_dtype)  # a list of rows, some empty
    out = FakeArray(np.full((S.shape[0], k), -7, dtype))
    spmm_launch.launch_regk(A, x, k, out, None, 1.0, 0.0, rows=FakeArray(rows), sub=sub)
    want = np.full((S.shape[0], k), -7.0)
    want[rows] = (S @ X)[rows]
    assert np.array_equal(out.get(), want), "rows off the list are left alone"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kernel", ["warp", "subwarp"])
@pytest.mark.parametrize("k", [1, 4, 7, 32, 64, 150, 300])
def test_spmm_warp_kernels_give_the_exact_product(emulated, rng, dtype, kernel, k):
    """warp and subwarp over every lane shape (CL lanes along k, J vectors a lane, column tiles in
    grid y), with 16-byte vectors where k allows and single loads where the leading dimension
    does not, with alpha, beta and Y."""
    from spla.backends.cuda import spmm_launch

    A, S = _spmm_case(rng, dtype)
    launch = spmm_launch.launch_warp if kernel == "warp" else spmm_launch.launch_subwarp
    for ld in (k, k + 1):
        x, X = _block(rng, dtype, S.shape[1], k, ld=ld)
        y, Y = _block(rng, dtype, S.shape[0], k)
        Y *= 2
        y.array.a[...] = Y
        out = FakeArray(np.full((S.shape[0], k), np.nan, dtype))
        launch(A, x, k, out, y, 3.0, 0.5)
        assert np.array_equal(out.get(), 3 * (S @ X) + 0.5 * Y), f"ld {ld}"


# dia's SpMM loads its diagonals in batches of DIA_BATCH (5), a remainder of 2-4 as a batch of its own (its
# TAIL instances): 5 diagonals are one batch, 7 a batch and a remainder of 2, 3 a remainder alone, 9 a batch and
# a remainder of 4, 11 two batches and a remainder of 1 (one at a time)
DIA_SPMM_MATRICES = {"poisson2d-5": lambda: generators.poisson2d(20), "poisson3d-7": lambda: generators.poisson3d(9),
                     "band-3": lambda: generators.banded(300, 1), "band-9": lambda: generators.banded(300, 4),
                     "band-11": lambda: generators.banded(300, 5)}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("palette", [False, True], ids=["values", "palette"])
@pytest.mark.parametrize("k", [1, 2, 3, 4, 6, 8, 13, 32])
@pytest.mark.parametrize("matrix", list(DIA_SPMM_MATRICES))
def test_spmm_dia_gives_the_exact_product_and_subwarps_bits(emulated, rng, monkeypatch, dtype, palette, k, matrix):
    """dia's SpMM over a 3-D stencil's and two bands' diagonals (rows cut at the edges: columns
    outside X), read from their values or a palette's codes, with the widest vectors (16 bytes,
    float32's float2s, a value) that k and the leading dimension allow: exact with alpha, beta and Y
    on whole numbers, and the bits of subwarp (the same fma order) on real values."""
    from spla.backends.cuda import spmm_launch

    host = DIA_SPMM_MATRICES[matrix]().astype(dtype)
    host.data[:] = rng.choice(_whole(rng, dtype, 5), host.nnz)  # a few values: a palette of them
    A, _ = _device(host.indptr, host.indices, host.data, host.shape)
    _dia_on_device(A, host, palette, monkeypatch)
    S = host.to_scipy().astype(np.float64)
    n = S.shape[0]
    for ld in (k, k + 1):
        x, X = _block(rng, dtype, n, k, ld=ld)
        y, Y = _block(rng, dtype, n, k)
        Y *= 2  # even, so beta's half of it is exact
        y.array.a[...] = Y
        out = FakeArray(np.full((n, k), np.nan, dtype))
        spmm_launch.launch_dia(A, x, k, out, y, 3.0, 0.5)
        vec = next(w for w in spmm_launch.dia_widths(dtype) if k % w == 0 and ld % w == 0)  # the widest that fits
        tail = A._cache["dia"].n_diagonals % spmm_launch.DIA_BATCH >= 2  # the remainder as one batch
        assert emulated.launches[-1][0] == template("spla_spmm_dia", dtype, vec, palette, tail)
        assert np.array_equal(out.get(), 3 * (S @ X) + 0.5 * Y), f"ld {ld}"
    real = spmm_launch.Operand(FakeArray(rng.standard_normal((n, k)).astype(dtype)), k, False)
    results = []
    for launch in (spmm_launch.launch_dia, spmm_launch.launch_subwarp):
        out = FakeArray(np.full((n, k), np.nan, dtype))
        launch(A, real, k, out, None, 1.0, 0.0)
        results.append(out.get())
    assert np.array_equal(results[0].view(np.uint8), results[1].view(np.uint8))


def _hot_path_case(rng, monkeypatch):
    """A 3-D Poisson stand-in device matrix of a few whole values (dia reads it through a palette)
    and its float64 SciPy twin."""
    host = generators.poisson3d(6).astype(np.float32)
    host.data[:] = rng.choice(_whole(rng, np.float32, 5), host.nnz)
    A, _ = _device(host.indptr, host.indices, host.data, host.shape)
    _dia_on_device(A, host, True, monkeypatch)
    return A, host.to_scipy().astype(np.float64)


def _assert_packed_launches_repeat(launcher, first: list, last: list) -> None:
    """The packed launches (``last``) pass the first call's launches' arguments but X's, Y's, out's
    and alpha's."""
    from spla.backends.cuda.spmm_launch import Launch

    assert len(first) == len(last) == len(launcher.packed)
    for p, made, again in zip(launcher.packed, first, last):
        alpha_slot = None if p.alpha_item is None else len(made[3]) + Launch.ALPHA_SLOT
        kept = [i for i in range(len(made[3])) if i not in (p.x_slot, p.y_in_slot, p.out_slot, alpha_slot)]
        assert made[:3] == again[:3] and [made[3][i] for i in kept] == [again[3][i] for i in kept]


def _hot_path_calls(emulated, rng, monkeypatch, A, S, kernel, k):
    """Five spla.spmm calls (out given but for the last; alpha 1, 3, int 2, float32 0.5, 1), each exact;
    after the first, the checked path refuses. The bound launcher and each call's launches."""
    import spla
    from spla.ops import spmm as ops_spmm
    from spla.planning.spmv import SPMM_BOUND_KEY

    def refuse(*args, **kwargs):
        raise AssertionError("a bound call should not reach the checked path")

    launches = []
    for call, alpha in enumerate((1.0, 3.0, 2, np.float32(0.5), 1.0)):
        before = len(emulated.launches)
        x, X = _block(rng, np.float32, S.shape[1], k)
        out = None if call == 4 else FakeArray(np.full((S.shape[0], k), np.nan, np.float32))
        result = spla.spmm(A, x.array, out=out, alpha=alpha, kernel=kernel)
        assert out is None or result is out
        assert np.array_equal(result.get(), float(alpha) * (S @ X)), f"call {call}"
        launches.append(emulated.launches[before:])
        if call == 0:
            monkeypatch.setattr(ops_spmm, "_spmm_checked", refuse)
    return A._cache[SPMM_BOUND_KEY][(kernel, (S.shape[1], k))], launches


@pytest.mark.parametrize("kernel", ["auto", "dia", "subwarp", "warp", "regk", "fused", "adaptive"])
def test_spmm_hot_path_gives_the_checked_paths_product(emulated, rng, monkeypatch, kernel):
    """spla.spmm's hot path: the first call checks, plans and binds a launcher on A; the second runs
    it with no checks and packs its launches; the later ones re-launch the packed arguments with
    another X, out and alpha. Every call exact, with out given and without."""
    A, S = _hot_path_case(rng, monkeypatch)
    launcher, launches = _hot_path_calls(emulated, rng, monkeypatch, A, S, kernel, 8)
    assert launcher.packed is not None
    _assert_packed_launches_repeat(launcher, launches[0], launches[-1])


@pytest.mark.parametrize("kernel, matrix, k, packed", [
    ("fused", "mixed", 4, ["spla_spmm_init_rows", "spla_spmm_fused"]),
    ("fused", "mixed", 32, ["spla_spmm_init_rows", "spla_spmm_fused_wide"]),
    ("adaptive", "rows-cut-by-tiles", 4, ["spla_spmm_regk", "spla_spmm_regk", "spla_spmm_warp"]),
    ("adaptive", "mixed", 4, ["spla_spmm_init_rows", "spla_spmm_warp"] + ["spla_spmm_regk"] * 3 + ["spla_spmm_warp"])])
def test_spmm_hot_path_packs_a_run_of_launches(emulated, rng, monkeypatch, kernel, matrix, k, packed):
    """A run of several launches is packed whole: fused's over rows long enough to be cut in segments
    (the segmented rows set to zero, then the fused grid, narrow or wide), adaptive's row groups, and
    adaptive's over long rows (their rows set to zero, their segments, then the row groups). (With
    dense panels neither is: the GPU suite's test_hot_path_packs_only_a_run_of_launches, as the
    stand-in has no cupyx.)"""
    A, S = _spmm_case(rng, np.float32, matrix)
    launcher, launches = _hot_path_calls(emulated, rng, monkeypatch, A, S, kernel, k)
    assert not launcher.plan.schedule.panels
    assert [name.split("<")[0] for name, *_ in launches[-1]] == packed
    _assert_packed_launches_repeat(launcher, launches[0], launches[-1])


def test_spmm_hot_path_declines_what_it_does_not_check(emulated, rng, monkeypatch):
    """What the bound launcher's fast call refuses goes through spla.spmm's checks (and their errors);
    pointers aligned less than those it packed run unpacked, with the vectors they allow."""
    import spla
    from spla.errors import InputError
    from spla.planning import tune
    from spla.planning.spmv import SPMM_BOUND_KEY

    A, S = _hot_path_case(rng, monkeypatch)
    n, k = S.shape[0], 4
    x, X = _block(rng, np.float32, n, k)
    for _ in range(2):
        spla.spmm(A, x.array, kernel="subwarp")
    launcher = A._cache[SPMM_BOUND_KEY][("subwarp", (n, k))]
    assert launcher.packed is not None and launcher.alignment == 16
    assert launcher.fast(x.array, 1.0, 0.0, None) is not None
    assert launcher.fast(x.array, 1.0, 0.5, None) is None                               # beta
    assert launcher.fast(x.array, True, 0.0, None) is None                              # a bool alpha
    assert launcher.fast(FakeArray(X.astype(np.float64)), 1.0, 0.0, None) is None      # another dtype
    assert launcher.fast(X, 1.0, 0.0, None) is None                                     # NumPy X
    assert launcher.fast(FakeArray(np.ones((n, 2 * k), np.float32)), 1.0, 0.0, None) is None
    assert launcher.fast(x.array, 1.0, 0.0, FakeArray(np.ones((n, k), np.float64))) is None
    assert launcher.fast(x.array, 1.0, 0.0, x.array) is None                            # out over X
    with pytest.raises(InputError, match="alpha must be a real number"):
        spla.spmm(A, x.array, alpha=True, kernel="subwarp")
    # X 4 bytes off a 16-byte boundary: no 16-byte vectors, the product still exact
    buffer = np.zeros(n * k + 1, np.float32)
    buffer[1:] = X.ravel()
    shifted = FakeArray(buffer[1:].reshape(n, k))
    assert shifted.data.ptr % 16 == (buffer.ctypes.data + 4) % 16 != 0
    result = spla.spmm(A, shifted, kernel="subwarp")
    assert emulated.launches[-1][0] == template("spla_spmm_subwarp", np.float32, np.int32, 1, 4, 1)
    assert np.array_equal(result.get(), S @ X)
    tune.set_choice(A, "scalar", "measured")  # auto's SpMM at k = 1 runs auto's SpMV: a new choice unbinds
    assert SPMM_BOUND_KEY not in A._cache


def test_spmm_dia_refuses_a_matrix_off_a_few_diagonals(emulated, rng):
    from spla.backends.cuda import spmm_launch
    from spla.errors import KernelError

    A, S = _spmm_case(rng, np.float64)
    x, _ = _block(rng, np.float64, S.shape[1], 4)
    with pytest.raises(KernelError, match="kernel='dia' needs a matrix whose entries lie on a few diagonals"):
        spmm_launch.launch_dia(A, x, 4, FakeArray(np.zeros((S.shape[0], 4))), None, 1.0, 0.0)

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("k", [1, 8, 40])
def test_spmm_warp_segments_add_into_their_rows(emulated, rng, dtype, k):
    """The warp kernel over segments of long rows (row, begin, end): each adds alpha times its
    part into the row, which holds beta * Y before (the caller's part)."""
    from spla.backends.cuda import spmm_launch

    A, S = _spmm_case(rng, dtype)
    indptr = A.indptr.get().astype(np.int64)
    rows, begins, ends = [], [], []
    for r in (3, 50, 7):  # the rows of 9,000 and 700, and a short one, in pieces of at most 1,000
        for b in range(indptr[r], indptr[r + 1], 1000):
            rows.append(r), begins.append(b), ends.append(min(b + 1000, indptr[r + 1]))
    x, X = _block(rng, dtype, S.shape[1], k)
    Y = 2 * _whole(rng, dtype, S.shape[0] * k).reshape(-1, k)
    out = FakeArray(0.5 * Y)
    segments = (FakeArray(np.array(rows, A.index_dtype)), FakeArray(np.array(begins)), FakeArray(np.array(ends)))
    spmm_launch.launch_warp(A, x, k, out, None, 3.0, 0.5, segments=segments)
    want = 0.5 * Y.astype(np.float64)
    for r in set(rows):
        want[r] += 3 * (S[r] @ X).ravel()
    assert np.array_equal(out.get(), want)



@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout, sliced", [("columns", True), ("rows, ld past k", True), ("rows", True),
                                            ("rows", False)])
@pytest.mark.parametrize("k", [1, 4, 13, 16])
@pytest.mark.parametrize("name", ["mixed", "empty-edges"])
def test_spmm_fused_gives_the_exact_product(emulated, rng, dtype, k, layout, sliced, name):
    """fused (spla.planning.spmm's schedule: row classes a block each, long rows in segments whose
    rows spla_spmm_init_rows sets to beta * Y first) over X of either layout, with alpha, beta and Y;
    on packed rows (vector loads where k is a power of two) with the 32-lane classes spreading k
    over their lanes and without."""
    from spla.backends.cuda.spmm_fused import FusedLauncher
    from spla.planning import spmm as planning

    A, S = _spmm_case(rng, dtype, name)
    plan = planning.plan_spmm(A, k, "fused", dense=False, sliced=sliced, multiprocessors=1)
    colmajor = layout == "columns"
    ld = {"columns": S.shape[1] + 3, "rows, ld past k": k + 2, "rows": k}[layout]
    x, X = _block(rng, dtype, S.shape[1], k, ld=ld, colmajor=colmajor)
    y, Y = _block(rng, dtype, S.shape[0], k)
    Y *= 2  # even, so beta's half of it is exact
    y.array.a[...] = Y
    out = FakeArray(np.full((S.shape[0], k), np.nan, dtype))
    FusedLauncher(A, plan)(x, k, out, y, 3.0, 0.5)
    launched = {launch[0].split("<")[0] for launch in emulated.launches}
    assert "spla_spmm_fused" in launched and ("spla_spmm_init_rows" in launched) == (name == "mixed")
    assert np.array_equal(out.get(), 3 * (S @ X) + 0.5 * Y)

@pytest.mark.parametrize("dtype, k", [(np.float32, 20), (np.float32, 32), (np.float32, 40), (np.float32, 128),
                                      (np.float64, 18), (np.float64, 64)])
@pytest.mark.parametrize("name", ["mixed", "empty-edges"])
@pytest.mark.parametrize("segment_nnz", [1024, 12])
def test_spmm_fused_wide_gives_the_exact_product(emulated, rng, dtype, k, name, segment_nnz):
    """fused past k = 16 (spla_spmm_fused_wide: every class from K / W lanes a row up, and the
    segments, with k spread over the lanes; k under K leaves the last slices idle), with alpha,
    beta and Y, segments of 1,024 nonzeros or 12; an X whose rows are not 16-byte aligned runs
    adaptive, as exactly."""
    from spla.backends.cuda.spmm_fused import FusedLauncher
    from spla.planning import spmm as planning

    A, S = _spmm_case(rng, dtype, name)
    plan = planning.plan_spmm(A, k, "fused", dense=False, segment_nnz=segment_nnz, multiprocessors=1)
    assert (plan.schedule.n_long_rows > 50) == (segment_nnz < 100)
    vec = 16 // np.dtype(dtype).itemsize
    assert plan.kernel == "fused" and set(plan.schedule.table[:, 1]) <= {-32, 8, 16, 32}
    assert min(kind for kind in plan.schedule.table[:, 1] if kind > 0) >= planning.next_pow2(k) // vec
    for ld in (k, k + 1):
        x, X = _block(rng, dtype, S.shape[1], k, ld=ld)
        y, Y = _block(rng, dtype, S.shape[0], k)
        Y *= 2  # even, so beta's half of it is exact
        y.array.a[...] = Y
        out = FakeArray(np.full((S.shape[0], k), np.nan, dtype))
        before = len(emulated.launches)
        FusedLauncher(A, plan)(x, k, out, y, 3.0, 0.5)
        launched = {launch[0].split("<")[0] for launch in emulated.launches[before:]}
        assert ("spla_spmm_fused_wide" in launched) == (ld == k), launched
        assert np.array_equal(out.get(), 3 * (S @ X) + 0.5 * Y), f"ld {ld}"


@pytest.mark.parametrize("dtype, k, runs", [(np.float32, 18, "adaptive"), (np.float32, 132, "adaptive"),
                                            (np.float64, 66, "adaptive"), (np.float64, 24, "fused")])
def test_spmm_fused_runs_adaptive_where_the_wide_kernel_cannot(emulated, rng, dtype, k, runs):
    """Past k = 16 fused needs k a multiple of a 16-byte vector and at most a warp of vectors."""
    from spla.planning import spmm as planning

    A, _ = _spmm_case(rng, dtype)
    assert planning.plan_spmm(A, k, "fused", dense=False, multiprocessors=1).kernel == runs


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1, 1), (37, 5), (9, 131), (300, 64)])
def test_gemv_gives_the_exact_product(emulated, rng, dtype, shape):
    """The dense rows' kernel (kernels/gemm/gemv.cu, a warp a row, 16-byte loads and the columns
    past the last pack), with alpha, beta and y."""
    from spla.backends.cuda import gemm

    M = _whole(rng, dtype, shape[0] * shape[1]).reshape(shape)
    x = _whole(rng, dtype, shape[1])
    y = 2 * _whole(rng, dtype, shape[0])
    got = gemm.gemv(FakeArray(M), FakeArray(x), FakeArray(y.copy()), alpha=3.0, beta=0.5)
    assert emulated.launches[-1][0].startswith("spla_gemm_gemv<")
    assert np.array_equal(got.get(), 3 * (M.astype(np.float64) @ x) + 0.5 * y)

# GEMM's fp32 steps, auto's kernels among them (dbuf, dbuf64, splitk, splitk_n8: their cp.async copies
# land at the wait, cuda_on_cpu.h); 07_tf32 and 09_tf32_wgmma use the tensor cores, which only the
# GPU suite runs
GEMM_STEPS = ["naive", "tiled16", "tiled32", "padded", "vec4", "regblock", "dbuf", "dbuf64", "splitk", "splitk_n8"]


@pytest.mark.parametrize("kernel", GEMM_STEPS)
@pytest.mark.parametrize("shape", [(1, 1, 1), (37, 5, 11), (130, 70, 9), (65, 129, 33)])
def test_gemm_steps_give_the_exact_product(emulated, rng, kernel, shape):
    """The teaching sequence of kernels/gemm/ (2-D blocks for the first three, float4 loads of K
    padded to a multiple of 4 for the others), edges of every tile included: C = alpha A B + beta C,
    and C is not read where beta is 0 (NaN there stays out)."""
    from spla.backends.cuda import gemm
    from spla.planning.gemm import plan_gemm

    M, N, K = shape
    A = _whole(rng, np.float32, M * K).reshape(M, K)
    B = _whole(rng, np.float32, K * N).reshape(K, N)
    C = _whole(rng, np.float32, M * N).reshape(M, N)
    plan = plan_gemm(kernel, np.float32, shape)
    got = gemm.gemm(FakeArray(A), FakeArray(B), FakeArray(C.copy()), plan, alpha=2.0, beta=0.5)
    assert emulated.launches[-1][0].startswith(plan.kernel.function)
    assert np.array_equal(got.get(), 2 * (A.astype(np.float64) @ B) + 0.5 * C)
    fresh = gemm.gemm(FakeArray(A), FakeArray(B), FakeArray(np.full((M, N), np.nan, np.float32)), plan)
    assert np.array_equal(fresh.get(), A.astype(np.float64) @ B)


# ---- the structure passes (kernels/detect_structure.cu, csr_structure.cu) against their host twins

def _detection_cases(rng):
    """Matrices on a few diagonals (one with entries off them and a stored zero) and in bands."""

    stencil = generators.poisson2d(40).to_scipy().tocsr()
    off = stencil.tolil()
    off[5, 700], off[900, 3], off[17, 17] = 1.0, 2.0, 0.0  # two entries off the diagonals, a stored zero
    band = generators.banded(900, 6).to_scipy().tolil()
    band[300, 200] = 1.0  # a row that is not one run
    lengths = rng.integers(0, 30, 1500)
    indptr, indices, shape = _rows(lengths, 4000, rng)
    random = sp.csr_matrix((np.ones(len(indices)), indices, indptr), shape=shape)
    return {"stencil": stencil, "off-diagonals": off.tocsr(), "band": band.tocsr(), "random": random}


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("case", ["stencil", "off-diagonals", "band", "random"])
def test_structure_passes_match_the_host(emulated, rng, case, index_dtype):
    """The GPU passes dia and band detection make (spla.csr_passes's device side) give what the
    host side gives: the sampled diagonals, the values laid out on candidate diagonals with the
    counts of entries off them and of stored zeros, the rows' first columns, and the structure
    pass's descents, repeats and longest row."""
    from spla import csr_passes
    from spla.backends.cuda import csr_structure

    S = _detection_cases(rng)[case]
    host = CSRMatrix.from_scipy(S, dtype=np.float64, index_dtype=index_dtype)
    A, _ = _device(host.indptr, host.indices, host.data, host.shape, index_dtype)
    assert A.on_gpu and not host.on_gpu

    positions = np.sort(rng.choice(host.nnz, min(host.nnz, 500), replace=False)).astype(np.int64)
    assert np.array_equal(csr_passes.sampled_diagonals(A, positions), csr_passes.sampled_diagonals(host, positions))

    candidates = np.unique(csr_passes.sampled_diagonals(host, positions))[:8]
    stride = host.n_rows + 4
    values_device = FakeArray(np.zeros(candidates.size * stride))
    values_host = np.zeros(candidates.size * stride)
    got = csr_passes.check_diagonals(A, candidates, values_device, capacity=host.nnz)
    want = csr_passes.check_diagonals(host, candidates, values_host, capacity=host.nnz)
    assert (got.missed, got.zeros, got.canonical) == (want.missed, want.zeros, want.canonical)
    assert np.array_equal(np.sort(got.missed_diagonals), np.sort(want.missed_diagonals))
    assert np.array_equal(values_device.get(), values_host)

    (first_device, off_runs_device), (first_host, off_runs_host) = csr_passes.row_runs(A), csr_passes.row_runs(host)
    assert np.array_equal(first_device.get(), first_host) and off_runs_device == off_runs_host

    answer = FakeArray(np.zeros((1, 3), np.uint64))
    csr_structure.queue_structure(A.indptr, A.indices, host.nnz, answer, 0)
    rows = np.split(host.indices, host.indptr[1:-1])
    descent = any((np.diff(r.astype(np.int64)) < 0).any() for r in rows)
    repeat = any((np.diff(np.sort(r)) == 0).any() for r in rows)
    got = answer.get()[0]
    assert (bool(got[csr_structure.DESCENT]), bool(got[csr_structure.REPEAT])) == (descent, repeat)
    assert got[csr_structure.LONGEST_ROW] == np.diff(host.indptr).max()
    launched = {launch[0].split("<")[0] for launch in emulated.launches}
    assert launched == {"spla_dia_sample", "spla_dia_check", "spla_band_first", "spla_csr_structure"}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("capacity", [10_000, 7])
def test_palette_codes_match_the_host(emulated, monkeypatch, rng, dtype, capacity):
    """dia's palette pass on the GPU (kernels/detect_structure.cu, spla_palette_codes) gives its host
    twin's codes and count of slots off the table: zero slots, -0.0 (not 0.0's bits), values on the
    table and off it, over more slots than the grid's threads; the bits it keeps are of slots off the
    table, all of them where they fit (else the first ``capacity`` to arrive)."""
    from spla import csr_passes
    from spla.backends.cuda import detect, runtime

    monkeypatch.setattr(detect, "MAX_BLOCKS", 2)  # 512 threads for 2,700 slots: the grid strides
    stored = np.array([1.5, -2.0, 3.25, -0.0, 7.0], dtype=dtype)
    values = rng.choice(np.append(stored, 0.0).astype(dtype), size=(3, 900))
    values[1, rng.choice(900, 40, replace=False)] = rng.standard_normal(40)  # off the table
    unsigned = np.dtype(f"u{np.dtype(dtype).itemsize}")
    table = np.sort(np.append(stored[:4], 0.0).astype(dtype).view(unsigned)).view(dtype)  # 7.0 is off it too
    want = csr_passes.palette_codes(values, table, capacity)
    got = csr_passes.palette_codes(FakeArray(values), FakeArray(table), capacity)
    assert want.missed == got.missed > 40 and (want.missed > capacity) == (capacity == 7)
    np.testing.assert_array_equal(got.codes.get(), want.codes)
    assert got.codes.get().max() == table.size - 1 and (want.codes == 0).sum() > want.missed  # zero slots too
    assert got.missed_bits.size == min(want.missed, capacity) and got.missed_bits.dtype == unsigned
    off = values.view(unsigned)[(want.codes == 0) & (values.view(unsigned) != 0)]
    assert set(got.missed_bits.tolist()) <= set(off.tolist()) and off.size == want.missed
    if capacity > want.missed:
        np.testing.assert_array_equal(np.sort(got.missed_bits), np.sort(want.missed_bits))
    assert {launch[0] for launch in emulated.launches} == {f"spla_palette_codes<{runtime.ctype(dtype)}>"}


# ---- the solvers' kernels: CG's (solver_blas1.cu, solver_cg_product.cu, through spla/backends/cuda/solvers.py),
# PageRank's (solver_pagerank.cu) and the triangular solve's (solver_trisolve.cu)

@pytest.fixture
def solver_kernels(emulated, monkeypatch):
    """DeviceKernels of the stand-in device (its CuPy ElementwiseKernels, which no test here
    launches, left out)."""
    from spla.backends.cuda import solvers

    monkeypatch.setattr(solvers, "_elementwise_kernels", lambda: {})
    return lambda n, dtype: solvers.DeviceKernels(n, dtype)


def _stencil(dtype, side=24, index_dtype=np.int32):
    """The SPD 2-D Poisson matrix of side^2 rows (whole numbers) on the stand-in device, and SciPy's."""

    S = generators.poisson2d(side).to_scipy().tocsr().astype(dtype)
    A, _ = _device(S.indptr, S.indices, S.data, S.shape, index_dtype)
    return A, S.astype(np.float64)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("jacobi", [False, True])
def test_solver_dot_and_cg_step_are_exact(solver_kernels, rng, dtype, jacobi):
    """dot and the fused CG step (x += alpha p, r -= alpha q, z = dinv r, and r.z, r.r) over a
    grid of several blocks whose last block adds the partials: alpha = 2 / 4 and whole numbers,
    so every result is exact; then p.q of 0 freezes x and r and sets the breakdown flag."""
    n = 5000
    K = solver_kernels(n, dtype)
    assert K.grid[0] > 1
    a, b = _whole(rng, dtype, n), _whole(rng, dtype, n)
    out = FakeArray(np.zeros(1))
    K.dot(FakeArray(a), FakeArray(b), out)
    assert out.get()[0] == np.dot(a.astype(np.float64), b.astype(np.float64))

    x, r, p, q = (2 * _whole(rng, dtype, n) for _ in range(4))
    dinv = (2.0 ** rng.integers(-2, 2, n)).astype(dtype)
    want_x, want_r = x + 0.5 * p, r - 0.5 * q
    want_z = dinv * want_r if jacobi else want_r
    X, R, Z = FakeArray(x.copy()), FakeArray(r.copy()), FakeArray(np.zeros(n, dtype))
    rho, pq, flag, sums = (FakeArray(np.array(v, dtype=np.float64)) for v in ([2.0], [4.0], [0.0], [0.0, 0.0]))
    K.cg_step(X, R, Z, FakeArray(p), FakeArray(q), FakeArray(dinv) if jacobi else None, rho, pq, flag, sums)
    assert np.array_equal(X.get(), want_x) and np.array_equal(R.get(), want_r)
    rr = np.dot(want_r.astype(np.float64), want_r)
    if jacobi:
        assert np.array_equal(Z.get(), want_z)
        assert list(sums.get()) == [np.dot(want_r.astype(np.float64), want_z), rr]
    else:
        assert sums.get()[0] == rr
    assert flag.get()[0] == 0.0

    pq.a[0] = 0.0  # breakdown: alpha is 0 and the flag is raised
    K.cg_step(X, R, Z, FakeArray(p), FakeArray(q), FakeArray(dinv) if jacobi else None, rho, pq, flag, sums)
    assert np.array_equal(X.get(), want_x) and np.array_equal(R.get(), want_r) and flag.get()[0] == 1.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kernel", ["scalar", "warp:4", "warp:32"])
def test_cg_product_is_the_spmv_and_its_dot(solver_kernels, rng, dtype, kernel):
    """CgProduct over a bound row kernel: q = A p and p.q; then with the direction, p = z + beta p_old
    (beta = rho_new / rho_old = 1 / 2 here: exact) formed inside the same launch."""
    A, S = _stencil(dtype)
    n = S.shape[0]
    ops_spmv.spmv(A, FakeArray(np.ones(n, dtype)), kernel=kernel)
    product = solver_kernels(n, dtype).cg_product(ops_spmv.bound_launcher(A, kernel))
    assert product is not None
    p_old, z = 2 * _whole(rng, dtype, n), _whole(rng, dtype, n)
    q, pq = FakeArray(np.zeros(n, dtype)), FakeArray(np.zeros(1))
    product.product(FakeArray(p_old), q, pq)
    assert np.array_equal(q.get(), S @ p_old) and pq.get()[0] == np.dot(p_old.astype(np.float64), S @ p_old)

    p = FakeArray(np.zeros(n, dtype))
    rho_new, rho_old = FakeArray(np.array([1.0])), FakeArray(np.array([2.0]))
    product.direction_product(FakeArray(p_old), FakeArray(z), rho_new, rho_old, p, q, pq)
    want_p = z + 0.5 * p_old
    assert np.array_equal(p.get(), want_p) and np.array_equal(q.get(), S @ want_p)
    assert pq.get()[0] == np.dot(want_p.astype(np.float64), S @ want_p)



def _stencil_on_dia(dtype, monkeypatch, palette: bool, side=24):
    """:func:`_stencil` with dia's structure (and its palette where asked) handed to the device matrix."""
    A, S = _stencil(dtype, side)
    host = CSRMatrix.from_scipy(S.astype(dtype))
    _dia_on_device(A, host, palette, monkeypatch)
    return A, S


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("palette", [False, True], ids=["values", "palette"])
def test_cg_product_over_dia_reads_the_diagonals(solver_kernels, emulated, rng, monkeypatch, dtype, palette):
    """CgProduct over a bound dia launcher runs dia's entry of the fused product, over the values or
    the palette's codes as the SpMV does: q = A p and p.q exact, then with the direction formed in
    the launch, as over the CSR rows."""
    A, S = _stencil_on_dia(dtype, monkeypatch, palette)
    n = S.shape[0]
    product = solver_kernels(n, dtype).cg_product(ops_spmv.launcher(A, "dia"))
    assert product is not None
    p_old, z = 2 * _whole(rng, dtype, n), _whole(rng, dtype, n)
    q, pq = FakeArray(np.full(n, np.nan, dtype)), FakeArray(np.zeros(1))
    product.product(FakeArray(p_old), q, pq)
    assert emulated.launches[-1][0] == template("spla_cg_product_dia", dtype, palette, False)
    assert np.array_equal(q.get(), S @ p_old) and pq.get()[0] == np.dot(p_old.astype(np.float64), S @ p_old)

    p = FakeArray(np.full(n, np.nan, dtype))
    rho_new, rho_old = FakeArray(np.array([1.0])), FakeArray(np.array([2.0]))
    product.direction_product(FakeArray(p_old), FakeArray(z), rho_new, rho_old, p, q, pq)
    want_p = z + 0.5 * p_old
    assert np.array_equal(p.get(), want_p) and np.array_equal(q.get(), S @ want_p)
    assert pq.get()[0] == np.dot(want_p.astype(np.float64), S @ want_p)

def _cg_reference(S, b, dinv, iterations):
    """CG's iterates in float64, in the one-launch loop's order of steps."""
    x, r = np.zeros_like(b), b.copy()
    z = dinv * r if dinv is not None else r
    p, rho, rho_old = z.copy(), r @ z, 0.0
    for k in range(1, iterations + 1):
        if k > 1:
            p = z + (rho / rho_old) * p
        q = S @ p
        alpha = rho / (p @ q)
        x, r = x + alpha * p, r - alpha * q
        z = dinv * r if dinv is not None else r
        rho_old, rho = rho, r @ z
    return x, r


def _loop_start(b, dinv):
    """A CgLoop's buffers at iteration 1 of CG on A x = b from x = 0 (Jacobi where ``dinv``):
    (x, r, z, dinv, directions, q, state), p_1 = z_0 in the odd direction buffer and rho_0 in state."""
    n = b.size
    x, r = FakeArray(np.zeros(n)), FakeArray(b.copy())
    z0 = dinv * b if dinv is not None else b
    z = FakeArray(z0.copy()) if dinv is not None else r
    directions = (FakeArray(np.zeros(n)), FakeArray(z0.copy()))
    state = FakeArray(np.zeros(8))
    state.a[2] = b @ z0
    return x, r, z, FakeArray(dinv) if dinv is not None else r, directions, FakeArray(np.zeros(n)), state


@pytest.mark.parametrize("jacobi", [False, True])
def test_cg_loop_runs_cg_iterations_in_one_cooperative_launch(solver_kernels, emulated, rng, jacobi):
    """CgLoop: whole iterations in one launch, its grid barriers between the product and the step
    (every block resident, as a cooperative launch has them), in two launches of 6: the iterates
    of float64 CG to rounding, the same bits whatever order the blocks and threads run in, and the
    iteration count and convergence flag in the state; a launch after convergence does nothing."""
    A, S = _stencil(np.float64)
    n = S.shape[0]
    ops_spmv.spmv(A, FakeArray(np.ones(n)), kernel="warp:4")
    b = rng.standard_normal(n)
    dinv = 1.0 / S.diagonal() if jacobi else None
    want_x, want_r = _cg_reference(S, b, dinv, 12)
    results = []
    for seed in (1, 2):
        emulated.seed = seed
        loop = solver_kernels(n, np.float64).cg_loop(ops_spmv.bound_launcher(A, "warp:4"), jacobi)
        assert loop is not None and loop.grid[0] > 1
        buffers = _loop_start(b, dinv)
        x, r, state = buffers[0], buffers[1], buffers[-1]
        for first in (1, 7):
            loop.run(first, 6, *buffers, atol=0.0)
        assert emulated.launches[-1][0].startswith("spla_cg_loop<double")
        assert state.get()[7] == 12 and state.get()[6] == 0 and state.get()[0] == 0
        np.testing.assert_allclose(x.get(), want_x, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(r.get(), want_r, rtol=1e-7, atol=1e-10)
        loop.run(13, 6, *buffers, atol=1e9)  # converged at once: one iteration, then flag 6
        assert state.get()[7] == 13 and state.get()[6] == 1
        after = x.get()
        loop.run(14, 6, *buffers, atol=1e9)
        assert state.get()[7] == 13 and np.array_equal(x.get(), after), "a converged solve stays put"
        results.append(after.view(np.uint8))
    assert np.array_equal(*results)


@pytest.mark.parametrize("palette", [False, True], ids=["values", "palette"])
@pytest.mark.parametrize("jacobi", [False, True])
def test_cg_loop_over_dia_gives_the_scalar_loops_bits(solver_kernels, emulated, rng, monkeypatch, jacobi, palette):
    """CgLoop over a bound dia launcher runs dia's entry of the loop, a thread a row on the scalar
    kernel's grid: a row's diagonals in the CSR row's order, so 8 iterations give the bits of the
    loop over the CSR rows (and CG's iterates to rounding)."""
    A, S = _stencil_on_dia(np.float64, monkeypatch, palette)
    n = S.shape[0]
    b = rng.standard_normal(n)
    dinv = 1.0 / S.diagonal() if jacobi else None
    results = []
    for kernel in ("dia", "scalar"):
        loop = solver_kernels(n, np.float64).cg_loop(ops_spmv.launcher(A, kernel), jacobi)
        assert loop is not None and loop.grid[0] > 1
        buffers = _loop_start(b, dinv)
        loop.run(1, 8, *buffers, atol=0.0)
        assert buffers[-1].get()[7] == 8
        want = (template("spla_cg_loop_dia", np.float64, palette, jacobi) if kernel == "dia"
                else template("spla_cg_loop", np.float64, np.int32, 1, jacobi))
        assert emulated.launches[-1][0] == want
        results.append(buffers[0].get())
    np.testing.assert_allclose(results[0], _cg_reference(S, b, dinv, 8)[0], rtol=1e-9, atol=1e-12)
    assert np.array_equal(results[0].view(np.uint8), results[1].view(np.uint8))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("scaled", [False, True])
def test_pagerank_kernels_are_exact(emulated, rng, dtype, scaled):
    """PageRank's set-up kernel (each row's weight summed in order: 1 / weight and the dangling
    rows, as the host build has them) and its update (x_new = alpha (y + dangling_sum d) +
    (1 - alpha) p, with the L1 change and the next dangling sum from the same pass, and z = scale
    x_new for the next SpMV), with its arguments in spla.graph's order; alpha = 1/2 and whole
    numbers, so every result is exact."""
    from spla.backends.cuda import pagerank as cuda_pagerank

    indptr, indices, shape = _shape("empty-edges", rng)
    A, H = _device(indptr, indices, np.abs(_whole(rng, dtype, len(indices))), shape)
    n = shape[0]
    scale, is_dangling = FakeArray(np.zeros(n)), FakeArray(np.zeros(n, np.uint8))
    cuda_pagerank.out_weight(A, scale, is_dangling)
    weight = np.asarray(H.to_scipy().astype(np.float64).sum(axis=1)).ravel()  # as spla.graph's host build
    assert np.array_equal(is_dangling.get(), (weight == 0).astype(np.uint8)) and (weight == 0).any()
    assert np.array_equal(scale.get(), np.where(weight == 0, 0.0, 1.0 / np.where(weight == 0, 1.0, weight)))

    y, x_old, p, d = (_whole(rng, dtype, n) for _ in range(4))
    x_new, z = FakeArray(np.zeros(n, dtype)), FakeArray(np.zeros(n, dtype))
    grid = (cuda_pagerank.grid(n),)
    partials, counter, out = FakeArray(np.zeros(2 * grid[0])), FakeArray(np.zeros(1, np.uint32)), FakeArray(np.zeros(2))
    kernel = cuda_pagerank.step_kernel(dtype, uniform_teleport=False, uniform_dangling=False, scaled=scaled)
    kernel(grid, (cuda_pagerank.SOLVER_BLOCK,), (FakeArray(y), FakeArray(x_old), x_new, z, scale, is_dangling,
                                                 FakeArray(p), FakeArray(d), np.int64(n), np.float64(1.0 / n),
                                                 np.float64(0.5), FakeArray(np.array([2.0])), partials, counter, out))
    want = 0.5 * (y.astype(np.float64) + 2.0 * d) + 0.5 * p
    assert grid[0] > 1 and np.array_equal(x_new.get(), want.astype(dtype))
    assert list(out.get()) == [np.abs(want - x_old).sum(), want[weight == 0].sum()]
    if scaled:
        assert np.array_equal(z.get(), (want * scale.get()).astype(dtype))


@pytest.mark.parametrize("unit_diagonal", [False, True])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_triangular_solve_matches_scipy(emulated, rng, dtype, lower, unit_diagonal):
    """spla.linalg.TriangularSolver on the stand-in device: a level of 3,000 rows (one launch of
    the level kernel), then a run of small levels (one block that sweeps them, a barrier
    between levels), in SciPy's answer to rounding."""
    from scipy.sparse.linalg import spsolve_triangular

    from spla.linalg import TriangularSolver

    n, first = 4000, 3000
    rows = np.repeat(np.arange(first, n), 3)
    columns = (rows * rng.random(rows.size)).astype(np.int64)  # rows past the first level lean on earlier ones
    strict = sp.csr_matrix((rng.uniform(-0.5, 0.5, rows.size), (rows, columns)), shape=(n, n))
    diagonal = sp.diags(rng.uniform(1.0, 2.0, n))
    flip = np.arange(n)[::-1]  # upper: the same triangle numbered from the end, so its levels are the same

    def oriented(M):
        M = M.tocsr()
        return M if lower else M[flip][:, flip].tocsr()

    solver = TriangularSolver(oriented(strict + diagonal), lower=lower, unit_diagonal=unit_diagonal)
    assert solver.levels > 2 and np.diff(solver.level_ptr).max() >= first
    b = rng.standard_normal(n).astype(dtype)
    got = solver.solve(FakeArray(b)).get()
    reference = oriented(strict + (sp.eye(n) if unit_diagonal else diagonal))
    want = spsolve_triangular(reference, b.astype(np.float64), lower=lower)
    launched = {launch[0].split("<")[0] for launch in emulated.launches}
    assert launched == {"spla_trisolve_level", "spla_trisolve_levels_block"}
    np.testing.assert_allclose(got, want, rtol=1e-4 if dtype == np.float32 else 1e-12, atol=1e-5)


def test_build_folders_unused_for_days_are_pruned(tmp_path):
    """A new build folder removes the ones nobody has used for UNUSED_SECONDS, and only those."""
    import os
    import time

    old, recent = tmp_path / "old-hash", tmp_path / "recent-hash"
    for folder in (old, recent):
        (folder / "lib").mkdir(parents=True)
    stale = time.time() - cuda_emulator.UNUSED_SECONDS - 60
    os.utime(old, (stale, stale))
    cuda_emulator._prune(tmp_path)
    assert not old.exists() and recent.exists()
    cuda_emulator._prune(tmp_path / "absent")  # no folder yet: nothing to do
