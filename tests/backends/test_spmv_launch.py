"""The CUDA SpMV backend's host path without a GPU: the stand-in CuPy of fake_cupy.py reads
each launch's packed arguments the way cuLaunchKernel does, by the parameter types of the
kernel's signature in kernels/spmv_*.cu, so the cached launchers' arguments are checked for
order, count and type; and the hot path is shown to bind once and fall back to the checked path
for unusual calls. (What the kernels compute from them: test_kernels_emulated.py.)
"""

from __future__ import annotations

import fake_cupy
import numpy as np
import pytest
import scipy.sparse as sp
from fake_cupy import FakeArray

from spla.backends.cuda import runtime
from spla.backends.cuda import spmv as cuda_spmv
from spla.csr import CSRMatrix
from spla.ops import spmv as ops_spmv
from spla.planning import adaptive, segmented


@pytest.fixture
def launches(monkeypatch):
    return fake_cupy.install(monkeypatch)


def _signature(filename, kernel):
    """Parameter names of a __global__ kernel, in order, from its source."""
    return [name for _, name in fake_cupy.parameters(filename, kernel)]


def ptr(array) -> int:
    return array.data.ptr


def _device(host_matrix):
    H = CSRMatrix.from_scipy(host_matrix, dtype=np.float32)
    return CSRMatrix(FakeArray(H.data), FakeArray(H.indices), FakeArray(H.indptr), H.shape, validate=False)


@pytest.mark.parametrize("kernel,filename,function", [
    ("scalar", "spmv_scalar.cu", "spla_spmv_scalar"),
    ("warp", "spmv_warp.cu", "spla_spmv_warp"),
    ("vector", "spmv_vector.cu", "spla_spmv_vector"),
    ("adaptive", "spmv_adaptive.cu", "spla_spmv_adaptive"),
    ("adaptive2", "spmv_adaptive2.cu", "spla_spmv_adaptive2"),
    ("segmented", "spmv_segmented.cu", "spla_spmv_segmented"),
    ("staged", "spmv_staged.cu", "spla_spmv_staged"),
])
def test_launch_arguments_follow_the_kernel_signature(rng, launches, kernel, filename, function):
    lengths = rng.integers(0, 20, 400)
    lengths[3], lengths[50] = 9000, 700  # split and rows paths
    indptr = np.concatenate(([0], np.cumsum(lengths)))
    A = _device(sp.csr_matrix((rng.random(indptr[-1]), rng.integers(0, 100000, indptr[-1]), indptr),
                              shape=(400, 100000)))
    x = FakeArray(rng.random(100000).astype(np.float32))
    params = _signature(filename, function)
    for call in range(3):
        out = ops_spmv.spmv(A, x, kernel=kernel, alpha=2.0 if call == 2 else 1.0)
        name, grid, block, args, shared_mem = launches[-1]
        assert name.startswith(function + "<float, int")
        assert len(args) == len(params), f"{kernel}: {len(args)} arguments for {params}"
        assert args[params.index("x")] == ptr(x) and args[params.index("y")] == ptr(out)
        assert args[params.index("indices")] == ptr(A.indices) and args[params.index("data")] == ptr(A.data)
        assert args[params.index("alpha")] == (2.0 if call == 2 else 1.0) and args[params.index("beta")] == 0
        assert isinstance(args[params.index("alpha")], np.float32)
        if "row_list" in params:
            state = ops_spmv.bound_launcher(A, kernel).state
            assert args[params.index("row_list")] == ptr(state.row_list)
            assert args[params.index("n_blocks")] == state.blocks.shape[0]
        if kernel == "segmented":
            n_tiles = args[params.index("n_tiles")]
            K = segmented.segmented_default(np.float32)
            assert args[params.index("nnz")] == A.nnz and n_tiles == -(-A.nnz // (32 * K))
            assert shared_mem == (segmented.SEGMENTED_WARPS * 32 * K * 4 if (lengths == 0).any() else 0)
            assert args[params.index("tile_rows")] == ptr(A._cache[("segmented-state", K, 0, "<f4")][0])
            assert grid[0] * segmented.SEGMENTED_WARPS >= n_tiles
        if kernel == "staged":  # a block a tile, its products in static shared memory
            n_tiles = args[params.index("n_tiles")]
            T = segmented.staged_default(np.float32, A.nnz)
            assert args[params.index("nnz")] == A.nnz and n_tiles == -(-A.nnz // (segmented.STAGED_THREADS * T))
            assert shared_mem == 0 and grid[0] == n_tiles
            tile_rows, _, _, (cut_device, counters) = A._cache[("staged-state", T, 0, "<f4")]
            assert args[params.index("tile_rows")] == ptr(tile_rows)
            # few cut rows: the kernel finishes them, a counter each (one launch)
            cut = segmented.staged_cut_rows(A, segmented.STAGED_THREADS * T)
            assert [3, 0, (indptr[4] - 1) // segmented.STAGED_THREADS // T] in cut.tolist()  # the row of 9,000
            assert 0 < len(cut) <= segmented.STAGED_ONE_LAUNCH_CUT and cut_device.shape == cut.shape
            assert args[params.index("counters")] == ptr(counters) and counters.shape == (n_tiles,)
        threads = {"adaptive": adaptive.ADAPTIVE_THREADS, "adaptive2": adaptive.ADAPTIVE_THREADS,
                   "segmented": segmented.SEGMENTED_THREADS, "staged": segmented.STAGED_THREADS}
        assert block[0] == threads.get(kernel, cuda_spmv.ROW_BLOCK)
    assert len(launches) == 3
    first = ops_spmv.bound_launcher(A, kernel)
    assert first is not None
    ops_spmv.spmv(A, x, kernel=kernel)
    assert ops_spmv.bound_launcher(A, kernel) is first, "bound once, reused"


def test_fast_path_declines_what_it_does_not_check(rng, launches):
    from spla.errors import InputError

    A = _device(sp.random(300, 200, density=0.05, format="csr", random_state=rng))
    x = FakeArray(rng.random(200).astype(np.float32))
    ops_spmv.spmv(A, x, kernel="scalar")
    bound = ops_spmv.bound_launcher(A, "scalar")
    assert bound.fast(x, 1.0, 0.0, None) is not None
    assert bound.fast(x, 1.0, 0.5, None) is None                       # beta != 0
    assert bound.fast(FakeArray(rng.random(201).astype(np.float32)), 1.0, 0.0, None) is None
    assert bound.fast(FakeArray(rng.random(200)), 1.0, 0.0, None) is None  # float64 x
    assert bound.fast(rng.random(200).astype(np.float32), 1.0, 0.0, None) is None  # NumPy x
    assert bound.fast(x, 1.0, 0.0, FakeArray(np.zeros(299, np.float32))) is None
    with pytest.raises(InputError, match="length 200"):
        ops_spmv.spmv(A, FakeArray(np.ones(201, np.float32)), kernel="scalar")
    with pytest.raises(InputError, match="needs y"):
        ops_spmv.spmv(A, x, beta=1.0, kernel="scalar")


def test_public_spmv_takes_the_cached_launcher(rng, launches, monkeypatch):
    import spla

    A = _device(sp.random(300, 200, density=0.05, format="csr", random_state=rng))
    x = FakeArray(rng.random(200).astype(np.float32))
    first = spla.spmv(A, x, kernel="scalar")
    assert ops_spmv.bound_launcher(A, "scalar") is not None

    def checked_path(*args, **kwargs):
        raise AssertionError("the second call should not reach the checked path")

    monkeypatch.setattr(ops_spmv, "as_csr", checked_path)  # spla.spmv's own checks
    monkeypatch.setattr(ops_spmv, "_spmv_checked", checked_path)
    second = spla.spmv(A, x, kernel="scalar")
    assert len(launches) == 2 and launches[-1][3][0] == launches[0][3][0]
    assert second.shape == first.shape


@pytest.mark.parametrize("palette", [False, True], ids=["values", "palette"])
def test_dia_launch_arguments_follow_the_kernel_signature(launches, monkeypatch, palette):
    from spla.io import generators
    from spla.planning import dia

    monkeypatch.setattr(dia, "PALETTE_MIN_BYTES", 0)  # a palette at any size

    host = generators.poisson2d(30).astype(np.float32)
    A = _device(host.to_scipy())
    found = dia.structure(host)  # detected on the host, handed to the stand-in device matrix
    A._cache["dia"] = dia.Structure(FakeArray(found.offsets), FakeArray(found.values), found.n_diagonals)
    coded = dia.palette(host, found)  # 2D Poisson's two values (4 and -1)
    assert coded is not None and coded.n_values == 2
    A._cache["dia-palette"] = dia.Palette(FakeArray(coded.codes), FakeArray(coded.table)) if palette else None
    x = FakeArray(np.ones(A.n_cols, dtype=np.float32))
    out = ops_spmv.spmv(A, x, kernel="dia:4")  # (the rule takes 1 on 900 rows: one wave at any R)
    name, grid, block, args, _ = launches[-1]
    entry = "spla_spmv_dia_palette" if palette else "spla_spmv_dia"
    params = _signature("spmv_dia.cu", entry)
    assert name == f"{entry}<float, 4>" and len(args) == len(params)
    assert args[params.index("n_rows")] == 900 and args[params.index("n_cols")] == 900
    assert args[params.index("stride")] == 904 and args[params.index("n_diagonals")] == 5
    assert args[params.index("offsets")] == ptr(A._cache["dia"].offsets)
    if palette:
        assert args[params.index("codes")] == ptr(A._cache["dia-palette"].codes)
        assert args[params.index("palette")] == ptr(A._cache["dia-palette"].table)
        assert args[params.index("n_palette")] == 3
    else:
        assert args[params.index("values")] == ptr(A._cache["dia"].values)
    assert args[params.index("x")] == ptr(x) and args[params.index("y")] == ptr(out)
    assert block == (cuda_spmv.ROW_BLOCK,) and grid == (-(-900 // (4 * cuda_spmv.ROW_BLOCK)),)


def test_band_launch_arguments_follow_the_kernel_signature(launches):
    from spla.io import generators
    from spla.planning import band

    host = generators.banded(300, 5).astype(np.float32)
    A = _device(host.to_scipy())
    found = band.structure(host)  # detected on the host, handed to the stand-in device matrix
    A._cache["band"] = band.Structure(FakeArray(found.first))
    x = FakeArray(np.ones(A.n_cols, dtype=np.float32))
    out = ops_spmv.spmv(A, x, kernel="band:4")
    name, grid, block, args, _ = launches[-1]
    params = _signature("spmv_band.cu", "spla_spmv_band")
    assert name == "spla_spmv_band<float, int, 4>" and len(args) == len(params)
    assert args[params.index("n_rows")] == 300 and args[params.index("indptr")] == ptr(A.indptr)
    assert args[params.index("first")] == ptr(A._cache["band"].first) and args[params.index("data")] == ptr(A.data)
    assert args[params.index("x")] == ptr(x) and args[params.index("y")] == ptr(out)
    assert block == (cuda_spmv.ROW_BLOCK,)
    assert grid == (cuda_spmv._grid(300, cuda_spmv.ROW_BLOCK // 4),)


def test_a_variant_packs_its_own_launch(rng, launches):
    """ab_kernel.py's hook: a variant runs another kernel with the launcher's arguments, packed
    apart, so launching it leaves the original's launch as it was."""
    A = _device(sp.random(500, 400, density=0.02, format="csr", random_state=rng))
    x = FakeArray(rng.random(400).astype(np.float32))
    out = FakeArray(np.zeros(500, np.float32))
    ops_spmv.spmv(A, x, kernel="warp:4", out=out)
    bound = ops_spmv.bound_launcher(A, "warp:4")
    other = runtime.KernelSource.function(cuda_spmv.SOURCES["warp"], "spla_spmv_warp<float, int, 8>")
    variant = bound.variant(other, threads_per_tile=128)
    y = FakeArray(np.zeros(500, np.float32))
    variant.launch(x, y, np.float32(3), np.float32(0))
    name, grid, block, args, _ = launches[-1]
    params = _signature("spmv_warp.cu", "spla_spmv_warp")
    assert name == "spla_spmv_warp<float, int, 8>" and block == (128,) and grid == (cuda_spmv._grid(500, 4),)
    assert args[params.index("y")] == ptr(y) and args[params.index("alpha")] == 3
    assert variant.row_lanes is None and bound.row_lanes == 4
    bound.launch(x, out, np.float32(1), np.float32(0))
    name, grid, block, args, _ = launches[-1]
    assert name == "spla_spmv_warp<float, int, 4>" and block == (cuda_spmv.ROW_BLOCK,)
    assert args[params.index("y")] == ptr(out) and args[params.index("alpha")] == 1


def test_a_staged_variant_keeps_the_planned_block(rng, launches, monkeypatch):
    """staged's tiles are planned for STAGED_THREADS: a variant may swap the kernel (and its
    finish launch still follows), not the block."""
    from spla.errors import KernelError

    monkeypatch.setattr(segmented, "STAGED_ONE_LAUNCH_CUT", 0)  # every cut row to the finish kernel
    A = _device(sp.random(500, 400, density=0.05, format="csr", random_state=rng))
    x = FakeArray(rng.random(400).astype(np.float32))
    out = FakeArray(np.zeros(500, np.float32))
    ops_spmv.spmv(A, x, kernel="staged:4", out=out)
    bound = ops_spmv.bound_launcher(A, "staged:4")
    other = runtime.KernelSource.function(cuda_spmv.SOURCES["staged"], "spla_spmv_staged<float, int, 4>")
    with pytest.raises(KernelError, match="no block variants"):
        bound.variant(other, threads_per_tile=512)
    before = len(launches)
    bound.variant(other).launch(x, out, np.float32(1), np.float32(0))
    names = [launch[0] for launch in launches[before:]]
    assert bound.finish is not None  # ~10,000 nonzeros in rows of ~20: tile edges cut rows
    assert names == ["spla_spmv_staged<float, int, 4>", "spla_spmv_staged_finish<float>"]


def test_an_adaptive2_variant_keeps_the_plan(rng, launches):
    """adaptive2 is one raw kernel over its plan's arrays: a variant swaps the kernel and keeps the
    plan's grid, block and arguments; its block is the plan's, so no block variants."""
    from spla.errors import KernelError

    A = _device(sp.random(600, 500, density=0.02, format="csr", random_state=rng))
    x = FakeArray(rng.random(500).astype(np.float32))
    out = FakeArray(np.zeros(600, np.float32))
    ops_spmv.spmv(A, x, kernel="adaptive2", out=out)
    bound = ops_spmv.bound_launcher(A, "adaptive2")
    name, grid, block, args, _ = launches[-1]
    other = runtime.KernelSource.function(cuda_spmv.SOURCES["adaptive"], "spla_spmv_adaptive<float, int>")
    with pytest.raises(KernelError, match="no block variants"):
        bound.variant(other, threads_per_tile=128)
    bound.variant(other).launch(x, out, np.float32(2), np.float32(0))
    v_name, v_grid, v_block, v_args, _ = launches[-1]
    assert name == "spla_spmv_adaptive2<float, int>" and v_name == "spla_spmv_adaptive<float, int>"
    assert (v_grid, v_block) == (grid, block) and v_args[:2] == args[:2]  # the plan's descriptors and count


def test_staged_finish_launch_takes_many_cut_rows(rng, launches, monkeypatch):
    """Past STAGED_ONE_LAUNCH_CUT cut rows the kernel leaves them (no counters: a null pointer)
    to the finish kernel, launched next over every cut row with the same y, alpha and beta."""
    monkeypatch.setattr(segmented, "STAGED_ONE_LAUNCH_CUT", 3)
    lengths = rng.integers(1, 40, 2000)
    indptr = np.concatenate(([0], np.cumsum(lengths)))
    A = _device(sp.csr_matrix((rng.random(indptr[-1]), rng.integers(0, 500, indptr[-1]), indptr), shape=(2000, 500)))
    x = FakeArray(rng.random(500).astype(np.float32))
    out = ops_spmv.spmv(A, x, kernel="staged:4", alpha=2.0)
    (name, _, _, args, _), (finish_name, _, _, finish_args, _) = launches[-2:]
    params, finish_params = _signature("spmv_staged.cu", name.split("<")[0]), _signature(
        "spmv_staged.cu", "spla_spmv_staged_finish")
    cut = segmented.staged_cut_rows(A, segmented.STAGED_THREADS * 4)
    _, _, _, (cut_device, _) = A._cache[("staged-state", 4, 0, "<f4")]
    assert len(cut) > 3 and args[params.index("counters")] == 0
    assert finish_name == "spla_spmv_staged_finish<float>" and len(finish_args) == len(finish_params)
    assert finish_args[finish_params.index("n_cut")] == len(cut)
    assert finish_args[finish_params.index("cut")] == ptr(cut_device)
    assert finish_args[finish_params.index("y")] == ptr(out) and finish_args[finish_params.index("alpha")] == 2.0


def test_staged_reads_narrow_columns_where_tiles_span_few(rng, launches, monkeypatch):
    """Where every tile's columns span fewer than NARROW_SPAN, float32 staged runs its narrow entry: 2-byte
    offsets and the tiles' first columns in place of the indices (tile_cols[t] + offsets[k] is
    column k). A tile over the span, or a dtype not in STAGED_NARROW, keeps the indices."""
    lengths = rng.integers(1, 30, 3000)
    indptr = np.concatenate(([0], np.cumsum(lengths)))
    nnz = int(indptr[-1])
    cols = np.repeat(np.arange(3000) * 60, lengths) + rng.integers(0, 5000, nnz)  # a band 5,000 wide
    x = FakeArray(rng.random(200_000).astype(np.float32))
    tile = segmented.STAGED_THREADS * 4

    def launched(columns, dtype=np.float32):
        H = CSRMatrix.from_scipy(sp.csr_matrix((rng.random(nnz), columns, indptr), shape=(3000, 200_000)), dtype=dtype)
        A = CSRMatrix(FakeArray(H.data), FakeArray(H.indices), FakeArray(H.indptr), H.shape, validate=False)
        ops_spmv.spmv(A, x if dtype == np.float32 else FakeArray(x.a.astype(dtype)), kernel="staged:4")
        name, _, _, args, _ = launches[-1]
        return A, name, dict(zip(_signature("spmv_staged.cu", name.split("<")[0]), args))

    A, name, args = launched(cols)
    assert name == "spla_spmv_staged_narrow<float, int, 4>"
    assert ops_spmv.bound_launcher(A, "staged:4").entry == "_narrow"
    offsets, tile_cols = A._cache[("staged-narrow", 4)]
    assert args["offsets"] == ptr(offsets) and args["tile_cols"] == ptr(tile_cols) and "indices" not in args
    assert offsets.dtype == np.uint16 and tile_cols.dtype == np.int32 and tile_cols.size == -(-nnz // tile)
    assert np.array_equal(np.repeat(tile_cols.a, tile)[:nnz] + offsets.a, A.indices.a)

    wide = cols.copy()
    wide[-1] = 0  # the last tile now spans its band's end down to column 0
    _, name, args = launched(wide)
    assert name == "spla_spmv_staged<float, int, 4>" and args["indices"] != 0

    A, name, args = launched(cols, np.float64)  # float32 only, by default
    assert name == "spla_spmv_staged<double, int, 4>" and args["indices"] == ptr(A.indices)
    monkeypatch.setattr(segmented, "STAGED_NARROW", ())
    A, name, args = launched(cols)
    assert name == "spla_spmv_staged<float, int, 4>" and args["indices"] == ptr(A.indices)

    def no_room(indices, tile):
        raise MemoryError("out of memory allocating the offsets")

    monkeypatch.setattr(segmented, "STAGED_NARROW", ("float32",))
    monkeypatch.setattr(segmented, "narrow_columns", no_room)  # the offsets do not fit: the indices serve
    A, name, args = launched(cols)
    assert name == "spla_spmv_staged<float, int, 4>" and args["indices"] == ptr(A.indices)


@pytest.mark.parametrize("columns", [100000, 20000], ids=["indices", "narrow"])
def test_staged_launches_a_matrix_of_one_value_with_that_value_alone(rng, launches, columns):
    """Every stored value the same: staged's _uniform entry (and _narrow_uniform where every tile spans
    under 65,536 columns), from its own module, with the matrix's indices or offsets and its data
    pointer (the value at data[0]); the entries that read every value where one value differs."""
    lengths = rng.integers(0, 20, 400)
    indptr = np.concatenate(([0], np.cumsum(lengths)))
    indices = rng.integers(0, columns, indptr[-1])
    if columns == 20000:
        indices.sort()  # rising: every tile spans under 65,536 columns
    A = _device(sp.csr_matrix((np.full(indptr[-1], 1.0), indices, indptr), shape=(400, columns)))
    x = FakeArray(rng.random(columns).astype(np.float32))
    out = ops_spmv.spmv(A, x, kernel="staged")
    name, grid, block, args, shared_mem = launches[-1]
    entry = "_narrow_uniform" if columns == 20000 else "_uniform"
    assert name.startswith(f"spla_spmv_staged{entry}<float, int")
    params = _signature("spmv_staged.cu", f"spla_spmv_staged{entry}")
    assert len(args) == len(params) and args[params.index("data")] == ptr(A.data)
    assert args[params.index("x")] == ptr(x) and args[params.index("y")] == ptr(out)
    assert ops_spmv.bound_launcher(A, "staged").entry == entry
    values = np.full(indptr[-1], 1.0)
    values[-1] = 2.0
    B = _device(sp.csr_matrix((values, indices, indptr), shape=(400, columns)))
    ops_spmv.spmv(B, x, kernel="staged")
    assert not launches[-1][0].startswith("spla_spmv_staged_uniform")
    assert not ops_spmv.bound_launcher(B, "staged").entry.endswith("_uniform")


@pytest.mark.parametrize("columns", [100000, 20000], ids=["indices", "narrow"])
def test_staged_launches_a_palette_with_its_table_and_codes(rng, launches, monkeypatch, columns):
    """Values that take a few bit patterns: staged's _palette entry (and _narrow_palette), from its own
    module, with the palette's table, its length and its codes where the data pointer was; the entries
    that read every value where a call touches less than STAGED_PALETTE_MIN_BYTES (no detection at all)."""
    from spla.planning import palette

    lengths = rng.integers(0, 20, 400)
    indptr = np.concatenate(([0], np.cumsum(lengths)))
    indices = rng.integers(0, columns, indptr[-1])
    if columns == 20000:
        indices.sort()  # rising: every tile spans under 65,536 columns
    host = sp.csr_matrix((rng.choice([4.0, -1.0, 0.5], indptr[-1]), indices, indptr), shape=(400, columns))
    A = _device(host)
    touched = A.data.nbytes + A.indices.nbytes + (400 + columns) * 4
    monkeypatch.setattr(segmented, "STAGED_PALETTE_MIN_BYTES", touched)
    monkeypatch.setattr(segmented, "STAGED_PALETTE", ("float32",))  # (float64 alone by default)
    found = palette.find(A.data.a)  # the pass runs on the host here (its kernel has tests of its own)
    A._cache["staged-palette"] = palette.Palette(FakeArray(found.codes), FakeArray(found.table))
    x = FakeArray(rng.random(columns).astype(np.float32))
    out = ops_spmv.spmv(A, x, kernel="staged")
    name, grid, block, args, shared_mem = launches[-1]
    entry = "_narrow_palette" if columns == 20000 else "_palette"
    assert name.startswith(f"spla_spmv_staged{entry}<float, int")
    params = _signature("spmv_staged.cu", f"spla_spmv_staged{entry}")
    coded = A._cache["staged-palette"]
    assert len(args) == len(params) and args[params.index("palette")] == ptr(coded.table)
    assert args[params.index("n_palette")] == 4 and coded.table.get().tolist() == [0.0, 0.5, 4.0, -1.0]
    assert args[params.index("codes")] == ptr(coded.codes) and args[params.index("y")] == ptr(out)
    monkeypatch.setattr(segmented, "STAGED_PALETTE_MIN_BYTES", touched + 1)
    B = _device(host)
    ops_spmv.spmv(B, x, kernel="staged")
    assert ops_spmv.bound_launcher(B, "staged").entry == entry.removesuffix("_palette")
    assert "staged-palette" not in B._cache
