"""A stand-in CuPy for the CUDA backend's host path on a machine without a GPU.

Its arrays are host memory, and its driver's ``launchKernel`` reads each launch's packed
arguments the way ``cuLaunchKernel`` does, by the parameter types of the kernel's signature in
``kernels/*.cu``, and records them; with ``emulate`` it also runs the kernel on the CPU
(``cuda_emulator.py``), so the host path's real launches compute a result. Its kernels also take
RawKernel's call (SpMM's, the structure passes' and the solvers' launchers use it), cooperative
launches included.
"""

from __future__ import annotations

import ctypes
import functools
import re
import types

import numpy as np

from spla import device
from spla.backends.cuda import csr_structure, runtime
from spla.backends.cuda import spmv as cuda_spmv


class HostView(np.ndarray):
    """A part of a FakeArray (a slice, a row): NumPy's array over the same memory, which a launch
    takes as a pointer and ``get()`` copies, as a CuPy view would be."""

    def get(self):
        return np.array(self)

    @property
    def data(self):  # a CuPy view's pointer (a packed launch takes it)
        return types.SimpleNamespace(ptr=self.ctypes.data)


class FakeArray:
    """Just enough of cupy.ndarray for spla's host path (host memory inside)."""

    def __init__(self, a):
        self.a = np.ascontiguousarray(a) if np.ndim(a) else np.asarray(a)
        self.shape, self.dtype, self.ndim, self.size = self.a.shape, self.a.dtype, self.a.ndim, self.a.size
        self.strides, self.itemsize, self.nbytes = self.a.strides, self.a.itemsize, self.a.nbytes
        self.data = types.SimpleNamespace(ptr=self.a.ctypes.data)
        self.flags = types.SimpleNamespace(c_contiguous=True)
        self._c_contiguous = True

    def astype(self, dtype, copy=True):
        return self if (not copy and np.dtype(dtype) == self.dtype) else FakeArray(self.a.astype(dtype))

    def get(self):
        return self.a.copy()

    def ravel(self):
        return self

    def __getitem__(self, key):  # a fake index array (the fake cupy.asarray's) reads as its host array
        part = self.a[key.a if isinstance(key, FakeArray) else key]
        return part.view(HostView) if isinstance(part, np.ndarray) else part

    def __setitem__(self, key, value):  # gemm's zero padding (padded[:, :K] = A), SpMM's out[rows] = 0
        self.a[key.a if isinstance(key, FakeArray) else key] = value.a if isinstance(value, FakeArray) else value

    def fill(self, value):  # split-K's C = 0 before its slices add in
        self.a.fill(value)

    def view(self, dtype):
        return FakeArray(self.a.view(dtype))

    def __eq__(self, other):
        return FakeArray(self.a == other)

    __hash__ = object.__hash__

    def all(self):
        return self.a.all()


def _read_arguments(params: int, name: str, filename: str) -> tuple:
    """The arguments a packed launch hands the driver, read as the kernel's parameters:
    a pointer (as an int), or a scalar of the parameter's type (``V`` or ``T``, then ``I``, from
    ``name``'s template arguments)."""
    # V, then I where the kernel has them (GEMM's float32 kernels have none)
    template_args = (name[name.index("<") + 1:-1].split(", ") if "<" in name else [""]) + [""]
    value, index = template_args[0], template_args[1]
    c_types = {"float": np.float32, "double": np.float64, "int": np.int32, "long long": np.int64}
    args = []
    for i, (c_type, _) in enumerate(parameters(filename, name.split("<")[0])):
        slot = ctypes.c_uint64.from_address(params + 8 * i).value  # kernelParams[i]
        if "*" in c_type:
            args.append(ctypes.c_uint64.from_address(slot).value)
            continue
        base = {"V": value, "T": value, "I": index}.get(c_type, c_type)  # the value type is V or T
        dtype = np.dtype(c_types[base])
        args.append(np.frombuffer(ctypes.string_at(slot, dtype.itemsize), dtype)[0])
    return tuple(args)


def _multiply(a, b, out):
    """cupy.multiply(a, scalar, out=out) (split-K's C = beta * C before its slices add in)."""
    np.multiply(a.a, b, out=out.a)
    return out


def _empty(shape, dtype=float):
    """cupy.empty: memory not cleared, here 0xff bytes (NaN, -1), so a read before a write shows."""
    a = np.empty(shape, dtype)
    a.view(np.uint8)[...] = 0xFF
    return FakeArray(a)


class RawKernel:
    """A compiled kernel as cupy.RawKernel is: ``kernel.ptr`` for the driver, and a call
    ``kernel(grid, block, args, shared_mem=0)`` that packs each argument into an 8-byte slot (an
    array's pointer; a NumPy scalar's bytes, of its own type as CuPy passes it) and launches."""

    def __init__(self, name, source, ptr, launch_kernel):
        self.name, self.source, self.filename = name, source, source.filename
        self.kernel = _Function(self, ptr)
        self._launch_kernel = launch_kernel

    def __call__(self, grid, block, args, shared_mem=0, enable_cooperative_groups=False):
        slots = np.zeros(len(args), dtype=np.uint64)
        for i, arg in enumerate(args):
            if isinstance(arg, FakeArray):
                slots[i] = arg.data.ptr
            elif isinstance(arg, np.ndarray):  # a HostView
                slots[i] = arg.ctypes.data
            else:
                assert isinstance(arg, np.generic), f"argument {i} of {self.name}: {type(arg).__name__}"
                slots[i:i + 1].view(np.uint8)[:arg.itemsize] = np.frombuffer(arg.tobytes(), np.uint8)
        addresses = slots.ctypes.data + 8 * np.arange(len(args), dtype=np.uint64)
        gx, gy = (tuple(grid) + (1,))[:2]
        bx, by = (tuple(block) + (1,))[:2]
        self._launch_kernel(self.kernel.ptr, gx, gy, 1, bx, by, 1, shared_mem, 0, addresses.ctypes.data, 0,
                            cooperative=enable_cooperative_groups)


class _Function:
    """A RawKernel's ``kernel``: the compiled function (``ptr``), itself callable as CuPy's is (a
    cooperative launch goes through it)."""

    def __init__(self, raw, ptr):
        self.raw, self.ptr = raw, ptr

    def __call__(self, grid, block, args, shared_mem=0, enable_cooperative_groups=False):
        self.raw(grid, block, args, shared_mem, enable_cooperative_groups)


MULTIPROCESSORS = 4  # the stand-in device's SMs: the solvers size their grids by it


class _DriverError(RuntimeError):
    """CuPy's CUDADriverError and CUDARuntimeError (the solvers catch them)."""


def _fake_cupy(launches, emulate):
    kernels = {}

    def kernel_for(source, name):
        kernel = RawKernel(name, source, len(kernels) + 1, launch_kernel)
        kernels[kernel.kernel.ptr] = kernel
        return kernel

    def launch_kernel(f, gx, gy, gz, bx, by, bz, shared_mem, stream, params, extra, cooperative=False):
        kernel = kernels[f]
        assert (gz, bz, extra) == (1, 1, 0)
        grid = (gx,) if gy == 1 else (gx, gy)
        block = (bx,) if by == 1 else (bx, by)
        launches.append((kernel.name, grid, block, _read_arguments(params, kernel.name, kernel.filename),
                         shared_mem))
        if emulate is not None:
            emulate(kernel.source, kernel.name, grid, block, shared_mem, params, cooperative=cooperative)

    fake = types.SimpleNamespace(
        __name__="cupy",
        ndarray=FakeArray,
        asarray=lambda a, dtype=None: a if isinstance(a, FakeArray) else FakeArray(np.asarray(a, dtype)),
        empty=_empty,
        empty_like=lambda a: _empty(a.shape, a.dtype),
        zeros=lambda n, dtype=float: FakeArray(np.zeros(n, dtype)),
        ascontiguousarray=lambda a, dtype=None: FakeArray(np.asarray(a.a, dtype)),
        concatenate=lambda arrays: FakeArray(np.concatenate(arrays)),  # of host pieces (FakeArray[...] is one)
        multiply=_multiply,
        may_share_memory=lambda a, b: np.may_share_memory(a.a, b.a),
        uint16=np.uint16, uint32=np.uint32, float64=np.float64,
        cuda=types.SimpleNamespace(
            runtime=types.SimpleNamespace(getDevice=lambda: 0, CUDARuntimeError=_DriverError),
            Device=lambda i=0: types.SimpleNamespace(id=0, attributes={"MultiProcessorCount": MULTIPROCESSORS}),
            driver=types.SimpleNamespace(launchKernel=launch_kernel, CUDADriverError=_DriverError,
                                         occupancyMaxActiveBlocksPerMultiprocessor=lambda f, block, shared: 8),
            get_current_stream=lambda: types.SimpleNamespace(ptr=0)))
    return fake, kernel_for


def parameters(filename, kernel):
    """``(type, name)`` of each parameter of a __global__ kernel, in order, from its source
    (the type without const and __restrict__: ``"V*"``, ``"long long"``, ``"int"``)."""
    text = (runtime.kernel_dir() / filename).read_text()
    match = re.search(rf"{kernel}\((.*?)\)\s*{{", text, flags=re.S)
    assert match, f"{kernel} not found in {filename}"
    found = []
    for declaration in match.group(1).split(","):
        c_type, name = re.fullmatch(r"\s*(.*?)\s*(\w+)\s*", declaration, flags=re.S).groups()
        c_type = " ".join(w for w in c_type.split() if w not in ("const", "__restrict__"))
        found.append((c_type.replace(" *", "*"), name))
    return found


def install(monkeypatch, emulate=None) -> list:
    """Put the stand-in CuPy in place for one test; the launches it records, as
    ``(name, grid, block, arguments, shared_mem)``, go to the list returned. ``emulate``: called
    as ``emulate(source, name, grid, block, shared_mem, params, cooperative=...)`` at each launch."""
    recorded = []
    fake, kernel_for = _fake_cupy(recorded, emulate)
    monkeypatch.setattr(device, "_import_cupy", lambda: fake)
    monkeypatch.setattr(device, "gpu_available", lambda: True)
    monkeypatch.setattr(device, "check_fits", lambda *a, **k: None)
    monkeypatch.setattr(runtime.KernelSource, "function", kernel_for)
    monkeypatch.setattr(cuda_spmv, "_FUNCTIONS", {})
    # kernels cached by the host path: a fresh cache, so that each test's launches are its own
    monkeypatch.setattr(csr_structure, "_kernel", functools.cache(csr_structure._kernel.__wrapped__))
    return recorded
