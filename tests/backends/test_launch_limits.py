"""Launch limits: grids CUDA cannot launch are refused, grid-stride kernels are capped."""


from __future__ import annotations

import pytest

from spla import KernelError
from spla.backends.cuda import runtime

WIDE = 2**31 + 5  # a dimension no int32 can index


# ===================================================================== launch configuration
def test_grid_helper_rejects_impossible_launches():
    assert runtime.grid_1d(0, 256) == 1
    assert runtime.grid_1d(67_200_000, 1024) == 65_625  # over 65,535 blocks: fine in x
    assert runtime.grid_1d(runtime.MAX_GRID_X * 256, 256) == runtime.MAX_GRID_X
    with pytest.raises(KernelError, match="grid limit"):
        runtime.grid_1d(runtime.MAX_GRID_X * 256 + 1, 256)
    for block in (0, -32, 1025):
        with pytest.raises(KernelError, match="block"):
            runtime.grid_1d(100, block)
    with pytest.raises(KernelError, match="negative"):
        runtime.grid_1d(-1, 256)


def test_spmv_backend_caps_grids_it_loops_over():
    from spla.backends.cuda import spmv as cuda_spmv

    assert cuda_spmv._grid(10**13, 256) == runtime.MAX_GRID_X  # grid-stride kernels: capped, not refused
    assert cuda_spmv._grid(0, 256) == 1


