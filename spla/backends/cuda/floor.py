"""The floors of a CSR SpMV (kernels/bench_floor.cu), for scripts/spmv_floor.py.

Each floor does one part of an SpMV's work over the nonzeros in CSR order, with
no rows: streaming the values and indices, gathering x at the indices, or both
(the products). Timed beside a kernel, they say how far that kernel is from the
least work any kernel reading the nonzeros in that order must do.
"""

from __future__ import annotations

import functools

import numpy as np

from ... import device as _device
from .runtime import INDEX_TYPES, VALUE_TYPES, KernelSource, ceil_div, template

MODES = {"stream": 0, "gather": 1, "product": 2}
FLOOR_THREADS = 256
FLOOR_ENTRIES = 8  # a thread's loads a tile: spla_floor's ENTRIES
FLOOR_BLOCKS_PER_SM = 8  # 2,048 threads an SM: every warp slot

FLOOR_SOURCE = KernelSource("bench_floor.cu", [
    *(template("spla_floor", v, i, mode, FLOOR_ENTRIES)
      for v in VALUE_TYPES for i in INDEX_TYPES for mode in MODES.values()),
    *(template("spla_floor_permute", v, i) for v in VALUE_TYPES for i in INDEX_TYPES)])


@functools.cache
def _grid(device_id: int) -> int:
    cupy = _device.require_cupy()
    return FLOOR_BLOCKS_PER_SM * cupy.cuda.Device(device_id).attributes["MultiProcessorCount"]


class Floor:
    """One floor bound to a device CSR matrix's arrays and an x: ``run()`` launches it and
    ``partial`` holds a sum a thread (their total is what the floor computed). ``shared_bytes``
    of dynamic shared memory a block, unused, take that much of each SM's L1 away, as a kernel
    staging its work in shared memory does."""

    def __init__(self, mode: str, indices, data, x, shared_bytes: int = 0, per_tile: bool = False):
        cupy = _device.require_cupy()
        if mode not in MODES:
            raise ValueError(f"a floor is one of {', '.join(MODES)}, got {mode!r}")
        # resident blocks looping over the tiles, or (per_tile) a block a tile, as spmv_staged launches
        self.grid = ceil_div(max(data.size, 1), FLOOR_THREADS * FLOOR_ENTRIES) if per_tile else _grid(
            cupy.cuda.Device().id)
        self.kernel = FLOOR_SOURCE.function(
            template("spla_floor", data.dtype, indices.dtype, MODES[mode], FLOOR_ENTRIES))
        self.partial = cupy.empty(self.grid * FLOOR_THREADS, dtype=data.dtype)
        self.args = (np.int64(data.size), indices, data, x, self.partial)
        self.shared_bytes = int(shared_bytes)

    def run(self) -> None:
        self.kernel((self.grid,), (FLOOR_THREADS,), self.args, shared_mem=self.shared_bytes)


def permuter(perm, x, xp):
    """A launch of ``xp[i] = x[perm[i]]``: the gather a plan with relabelled columns pays a call."""
    cupy = _device.require_cupy()
    kernel = FLOOR_SOURCE.function(template("spla_floor_permute", x.dtype, perm.dtype))
    grid = _grid(cupy.cuda.Device().id)
    args = (np.int64(perm.size), perm, x, xp)
    return lambda: kernel((grid,), (FLOOR_THREADS,), args)
