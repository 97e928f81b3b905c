"""The GEMM kernel sources: every registry kernel and variant declared, float4 padding, file headers."""

from __future__ import annotations

import numpy as np
import pytest

from spla.backends.cuda import gemm as cuda_gemm
from spla.bench import variants as V
from spla.planning import gemm as G


def test_registry_is_the_path_in_order():
    assert list(G.KERNELS) == ["naive", "tiled16", "tiled32", "padded", "vec4", "regblock", "dbuf",
                                       "tf32", "cublas"]
    for entry in [*G.ALL_KERNELS.values(), *V.GEMM_VARIANTS.values()]:
        if not entry.is_spla:
            continue
        source = cuda_gemm.source_of(entry)  # every registry kernel and variant is declared
        assert cuda_gemm.expression(entry).startswith("spla_gemm_")
        assert source.path.is_file()
        assert entry.threads <= G.MAX_THREADS_PER_BLOCK
    tf32 = G.KERNELS["tf32"]
    assert G.STATIC_SHARED_LIMIT < tf32.dynamic_shared <= G.OPT_IN_SHARED_LIMIT


@pytest.mark.parametrize("shape", [(5, 7, 3), (8, 8, 8), (4, 6, 9), (1, 1, 1), (3, 4, 0)])
def test_padding_for_vector_loads_is_exact(shape, rng):
    M, N, K = shape
    A, B = rng.standard_normal((M, K)).astype(np.float32), rng.standard_normal((K, N)).astype(np.float32)
    A4, B4, K4 = cuda_gemm.pad_for_vector_loads(A, B, np)
    assert K4 % 4 == 0 and A4.shape == (M, K4) and B4.shape[0] == K4 and B4.shape[1] % 4 == 0
    assert A4.ctypes.data % 16 == 0 and B4.ctypes.data % 16 == 0
    np.testing.assert_allclose((A4 @ B4)[:, :N], A @ B, rtol=1e-6, atol=1e-6)
    if K % 4 == 0 and N % 4 == 0 and A.ctypes.data % 16 == 0:
        assert A4 is A


def test_every_gemm_file_says_what_changed():
    for entry in G.KERNELS.values():
        if entry.is_spla and entry.name != "naive":
            assert "Changed from" in cuda_gemm.source_of(entry).path.read_text(), entry.file


