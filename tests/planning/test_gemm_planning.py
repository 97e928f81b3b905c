"""GEMM planning on the host: the registry, the auto shape rule, split-K slices, launch limits, plans."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import spla
from spla.bench import variants as V
from spla.planning import gemm as G


def test_auto_policy_never_picks_tf32():
    assert G.resolve_kernel("auto", np.float32).precision == "fp32"
    assert G.resolve_kernel("auto", np.float64).name == "cublas"
    with pytest.raises(spla.KernelError, match="unknown"):
        G.resolve_kernel("fastest", np.float32)
    with pytest.raises(spla.KernelError, match="float32 only"):
        G.resolve_kernel("regblock", np.float64)


def test_auto_rule_picks_small_tiles_for_small_grids():
    # 132 SMs (H200): 128 x 128 tiles need >= 264 blocks, else the small-tile kernel.
    small, large = G.AUTO_FP32_SMALL, G.AUTO_FP32
    assert small == "dbuf64"
    assert G.auto_kernel(np.float32, (1024, 1024, 1024), 132) == small     # 64 blocks (256 of 64 x 64)
    assert G.auto_kernel(np.float32, (16384, 64, 4096), 132) == small      # 128 blocks (256 of 64 x 64)
    assert G.auto_kernel(np.float32, (4096, 4096, 4096), 132) == large     # 1024 blocks
    assert G.auto_kernel(np.float32, (2048, 2112, 64), 132) == large       # 16 x 17 = 272 blocks
    assert G.auto_kernel(np.float32, (2048, 2048, 64), 132) == small       # 256 blocks
    assert G.auto_kernel(np.float64, (4096, 4096, 4096), 132) == "cublas"
    for name in (small, large):
        assert G.ALL_KERNELS[name].precision == "fp32"
    assert G.resolve_kernel("auto", np.float32, (8, 8, 8)).precision == "fp32"


def test_auto_rule_splits_k_for_few_tiles_and_long_k():
    # The SpMM dense panel: 2,000 rows x 100,000 columns times X with 8 or 32 columns.
    assert G.auto_kernel(np.float32, (2000, 8, 100_000), 132) == "splitk_n8"
    assert G.auto_kernel(np.float32, (2000, 32, 100_000), 132) == "splitk"   # 32 blocks of 64 x 64
    assert G.auto_kernel(np.float32, (2000, 64, 100_000), 132) == "splitk"
    assert G.auto_kernel(np.float32, (100_000, 4, 4096), 132) == "splitk_n8"  # N <= 8: narrow tile
    assert G.auto_kernel(np.float32, (4096, 44, 100), 132) == "dbuf64"       # short K: no split
    assert G.auto_kernel(np.float32, (2000, 8, 1000), 132) == "dbuf64"
    assert G.auto_kernel(np.float32, (16384, 64, 100_000), 132) == "dbuf64"  # 256 blocks of 64 x 64
    for name in ("splitk", "splitk_n8"):
        entry = G.ALL_KERNELS[name]
        assert entry.precision == "fp32" and entry.split_k_tile and entry.vector_loads


@pytest.mark.parametrize("shape", [(2000, 8, 100_000), (2000, 32, 100_000), (300, 8, 20_003), (5, 5, 4),
                                   (1, 1, 1_000_000), (4096, 4096, 4096)])
@pytest.mark.parametrize("name", ["splitk", "splitk_n8"])
def test_split_k_slices_cover_k_once(name, shape):
    entry = G.ALL_KERNELS[name]
    M, N, K = shape
    slices, per_slice = G.split_k_slices(entry, M, N, K, multiprocessors=132)
    k_tiles = -(-K // entry.split_k_tile)
    assert 1 <= slices <= 65535
    assert (slices - 1) * per_slice < k_tiles <= slices * per_slice   # every slice non-empty, K covered
    assert slices == 1 or per_slice >= G.SPLITK_MIN_TILES_PER_SLICE
    tiles = -(-M // entry.tile[0]) * -(-N // entry.tile[1])
    assert slices * tiles <= 2 * 132 * entry.resident_blocks or slices == 1   # about one wave


def test_dynamic_shared_sizes_match_the_kernel_layouts():
    # The host's byte counts must equal what the kernels index (see the headers).
    entries = {**G.ALL_KERNELS, **V.GEMM_VARIANTS}
    assert entries["dbuf64"].dynamic_shared == 3 * (64 * 20 + 16 * 64) * 4
    assert entries["splitk"].dynamic_shared == 3 * (128 * 36 + 32 * 32) * 4
    assert entries["splitk_n8"].dynamic_shared == 3 * (256 * 36 + 32 * 8) * 4
    for name in ("tf32", "tf32_trunc"):
        assert entries[name].dynamic_shared == 3 * (128 * 36 + 32 * 136) * 4, name
    # resident_blocks (sizes the split-K grid) must fit the SM's 228 KB, 1 KB reserved per block.
    for name in ("splitk", "splitk_n8"):
        entry = entries[name]
        assert entry.resident_blocks * (entry.dynamic_shared + 1024) <= 228 * 1024, name
        assert (entry.resident_blocks + 1) * (entry.dynamic_shared + 1024) > 228 * 1024, name
    for entry in entries.values():
        assert entry.dynamic_shared <= G.OPT_IN_SHARED_LIMIT, entry.name


def test_registry_has_no_dropped_candidates():
    dropped = {"dbuf_v2", "dbuf_v2_s4", "dbuf_v2_64", "padded_v2", "padded_v2_nopad", "tf32_w64x32",
               "tf32_v2", "tf32_v2_trunc", "tf32_v2_256x128", "tf32_v2_bk16s4", "transposed_b"}
    everything = {**G.ALL_KERNELS, **V.GEMM_VARIANTS}
    assert not dropped & set(everything)
    truncating = {name for name, e in everything.items() if e.tf32_rounding == "truncate"}
    assert truncating == {"tf32_trunc", "tf32_wgmma"}
    assert all(everything[name].precision == "tf32" for name in truncating)


def test_baseline_variants_are_out_of_the_public_registry():
    baselines = {"padded_nopad", "transposed_b_nopad", "transposed_b_padded", "tf32_trunc"}
    assert baselines == set(V.GEMM_VARIANTS)
    assert not baselines & set(G.ALL_KERNELS)
    teaching = ["naive", "tiled16", "tiled32", "padded", "vec4", "regblock", "dbuf", "dbuf64", "tf32", "tf32_wgmma",
                "splitk", "cublas"]
    assert set(teaching) <= set(G.KERNEL_NAMES)
    with pytest.raises(spla.KernelError, match="unknown GEMM kernel"):
        G.resolve_kernel("tf32_trunc", np.float32)
    assert G.resolve_kernel(V.gemm_kernel("tf32_trunc"), np.float32).name == "tf32_trunc"


@pytest.mark.parametrize("name, shape", [("dbuf", (1000, 30, 4003)), ("splitk", (2000, 32, 100_001)),
                                         ("naive", (5, 6, 7)), ("cublas", (5, 6, 7)), ("tf32_wgmma", (9, 9, 9)),
                                         ("auto", (2000, 8, 100_000))])
def test_gemm_plans(name, shape):
    plan = G.plan_gemm(name, np.float32, shape, multiprocessors=132)
    M, N, K = shape
    assert (plan.M, plan.N) == (M, N)
    if plan.kernel.vector_loads and not plan.kernel.k_major_b:
        assert plan.K == -(-K // 4) * 4 and plan.grid == G.grid_for(plan.kernel, M, N)
    if plan.kernel.split_k_tile:
        assert (plan.slices, plan.per_slice) == G.split_k_slices(plan.kernel, M, N, plan.K, 132)
    else:
        assert plan.slices == 0
    if name == "auto":
        assert plan.name == "splitk_n8"
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.M = 1


def test_impossible_configurations_fail_loudly():
    big = G.GemmKernel("too_big", "gemm/02_tiled.cu", "spla_gemm_tiled", (32,), (64, 32), (64, 32), False)
    with pytest.raises(spla.KernelError, match="threads"):
        G.checked(big)
    shared = G.GemmKernel("shared", "gemm/07_tf32.cu", "spla_gemm_tf32", (128, 128, 32, 64, 64, 3), (128, 1),
                          (128, 128), True, dynamic_shared=300 * 1024)
    with pytest.raises(spla.KernelError, match="shared memory"):
        G.checked(shared)
    with pytest.raises(spla.KernelError, match="grid.y"):
        G.grid_for(G.KERNELS["naive"], 8 * 70000, 10)
    assert G.grid_for(G.KERNELS["regblock"], 257, 129) == (2, 3)


