"""The CUDA runtime of spla's kernels: declaration, compilation, naming, grids.

Kernels live in ``kernels/`` (a source checkout) or ``spla/kernels/`` (an
installed wheel) and are compiled at run time with NVRTC through
``cupy.RawModule``, cached per (file, options, device). Each launcher module
of this package declares its sources once, at import time, with
:class:`KernelSource`; :func:`declared_sources` imports them all, and the CI
compile test instantiates every declared name with ``nvcc -arch=sm_90``.

One dtype map (:data:`VALUE_TYPES`, :data:`INDEX_TYPES`) and one template-name
builder (:func:`template`) serve every kernel family.
"""

from __future__ import annotations

import functools
import importlib
import operator
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ...device import require_cupy
from ...errors import KernelError
from ...kernel_files import kernel_dir
from ...planning import ceil_div

NVRTC_OPTIONS = ("-std=c++17",)

# The C++ type of each NumPy dtype a kernel is instantiated for.
VALUE_TYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}
INDEX_TYPES = {np.dtype(np.int32): "int", np.dtype(np.int64): "long long"}


def ctype(dtype) -> str:
    """The C++ name of a value or index dtype (``float32`` -> ``"float"``)."""
    dtype = np.dtype(dtype)
    name = VALUE_TYPES.get(dtype) or INDEX_TYPES.get(dtype)
    if name is None:
        raise KernelError(f"no kernel is instantiated for {dtype}; spla's kernels take "
                          f"{', '.join(str(d) for d in VALUE_TYPES)} values and "
                          f"{', '.join(str(d) for d in INDEX_TYPES)} indices")
    return name


def template(name: str, *args) -> str:
    """An NVRTC name expression: ``template("spla_spmv_warp", np.float32, np.int32, 8)``
    -> ``"spla_spmv_warp<float, int, 8>"``. Dtypes become their C++ names, bools
    ``true``/``false``, anything else its ``str``; no arguments, no brackets."""
    if not args:
        return name
    parts = []
    for arg in args:
        if isinstance(arg, bool):
            parts.append("true" if arg else "false")
        elif isinstance(arg, np.dtype) or (isinstance(arg, type) and issubclass(arg, np.generic)):
            parts.append(ctype(arg))
        else:
            parts.append(str(arg))
    return f"{name}<{', '.join(parts)}>"

class KernelSource:
    """One .cu file and the (template) kernels spla instantiates from it.

    ``names`` are NVRTC name expressions such as ``"spla_spmv_scalar<float, int>"``.
    Compilation happens on first use and is cached per (file, options, device).
    """

    declared: list[KernelSource] = []

    def __init__(self, filename: str, names: Sequence[str], options: Sequence[str] = ()):
        for name in names:
            if not name.startswith("spla_"):
                raise KernelError(f"exported kernel {name!r} must carry the spla_ prefix")
        self.filename = filename
        self.names = tuple(names)
        self.options = tuple(NVRTC_OPTIONS) + tuple(options)
        KernelSource.declared.append(self)

    @property
    def path(self) -> Path:
        return kernel_dir() / self.filename

    def function(self, name: str):
        """The compiled ``cupy.RawKernel`` for one declared name expression."""
        if name not in self.names:
            raise KernelError(f"{name} is not declared in {self.filename}")
        cupy = require_cupy()
        return _compiled_module(self, cupy.cuda.Device().id).get_function(name)


@functools.cache
def _compiled_module(source: KernelSource, device_id: int):
    cupy = require_cupy()
    code = source.path.read_text()
    options = source.options + (f"-I{kernel_dir()}",)
    module = cupy.RawModule(code=code, options=options, name_expressions=source.names)
    module.compile()
    return module


MAX_GRID_X = 2**31 - 1
MAX_BLOCK_THREADS = 1024


def grid_1d(n_threads: int, block: int) -> int:
    """Blocks for a 1-D launch, refusing grids CUDA cannot launch."""
    if not 1 <= block <= MAX_BLOCK_THREADS:
        raise KernelError(f"a block of {block} threads cannot launch (1..{MAX_BLOCK_THREADS})")
    if n_threads < 0:
        raise KernelError(f"cannot launch a negative number of threads ({n_threads})")
    blocks = max(1, ceil_div(n_threads, block))
    if blocks > MAX_GRID_X:
        raise KernelError(f"{n_threads} threads need {blocks} blocks, over CUDA's grid limit {MAX_GRID_X}")
    return blocks


def _contiguous_by_flags(a) -> bool:
    return a.flags.c_contiguous


def c_contiguity(cupy) -> Callable[[Any], bool]:
    """The cheapest test of a cupy array's C contiguity: CuPy keeps it as a plain attribute, where
    ``flags`` builds an object per call (what the hot paths pay for every array they take)."""
    return operator.attrgetter("_c_contiguous") if hasattr(cupy.ndarray, "_c_contiguous") else _contiguous_by_flags


class PackedLaunch:
    """One kernel's launch through the CUDA driver (``cuLaunchKernel``), its arguments packed once.

    A CuPy ``RawKernel`` call converts every argument on every launch: about 5 us of host time,
    most of a small SpMV's cost. Here each argument has an 8-byte slot in one host buffer, filled
    once; a caller rewrites only the slots that change (:meth:`set_pointer`, or a value view from
    :meth:`values`) and ``launch()`` is a single driver call on CuPy's current stream (so it can
    be captured in a CUDA graph). The driver copies the arguments during the call, so a slot may
    be rewritten as soon as ``launch()`` returns; callers that rewrite slots from several
    threads must hold :attr:`lock` around the writes and the launch.

    ``kernel``: a ``cupy.RawKernel``. ``grid``: blocks in x, or a tuple of up to three dimensions. ``args``: device
    arrays (their pointer), NumPy scalars (their bytes, of the kernel parameter's own type) or None (a slot the caller
    fills before the first launch).
    """

    SLOT = 8  # bytes: every argument spla passes (a pointer, a 64-bit integer or a double) fits

    def __init__(self, cupy, kernel, grid: int | tuple[int, ...], block: int, args: Sequence, shared_mem: int = 0):
        self.slots = np.zeros(len(args), dtype=np.uint64)
        # the driver's void** kernelParams: the address of each slot
        self._addresses = self.slots.ctypes.data + self.SLOT * np.arange(len(args), dtype=np.uint64)
        self.params = self._addresses.ctypes.data
        for i, arg in enumerate(args):
            if isinstance(arg, np.generic):
                self.values(arg.dtype)[self.value_index(i, arg.dtype)] = arg
            elif arg is not None:
                self.set_pointer(i, arg)
        # a RawKernel's ``kernel`` is its compiled function on the current device
        self.function = kernel.kernel.ptr
        dims = (grid,) if isinstance(grid, (int, np.integer)) else tuple(grid)
        self.grid = tuple(int(d) for d in dims) + (1,) * (3 - len(dims))
        self.block, self.shared_mem = int(block), int(shared_mem)
        self.driver_launch = cupy.cuda.driver.launchKernel
        self.current_stream = cupy.cuda.get_current_stream
        self.lock = threading.Lock()

    def set_pointer(self, i: int, array) -> None:
        self.slots[i] = array.data.ptr

    def values(self, dtype) -> np.ndarray:
        """The slots seen as ``dtype`` items (slot i is item :meth:`value_index` (i, dtype))."""
        return self.slots.view(dtype)

    def value_index(self, i: int, dtype) -> int:
        return i * self.SLOT // np.dtype(dtype).itemsize  # little-endian: a value starts its slot

    def launch(self) -> None:
        self.driver_launch(self.function, *self.grid, self.block, 1, 1, self.shared_mem,
                           self.current_stream().ptr, self.params, 0)


# The modules that declare kernels: importing them fills KernelSource.declared.
LAUNCHER_MODULES = ("spla.backends.cuda.spmv", "spla.backends.cuda.spmm", "spla.backends.cuda.gemm",
                    "spla.backends.cuda.solvers", "spla.backends.cuda.pagerank", "spla.backends.cuda.trisolve",
                    "spla.backends.cuda.timing", "spla.backends.cuda.amg",
                    "spla.backends.cuda.csr_structure", "spla.backends.cuda.detect",
                    "spla.backends.cuda.floor")


def declared_sources() -> list[KernelSource]:
    """Every kernel source spla declares (imports each launcher module once)."""
    for name in LAUNCHER_MODULES:
        importlib.import_module(name)
    return list(KernelSource.declared)
