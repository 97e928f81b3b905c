"""spla's CUDA kernels run on the CPU, for tests where no GPU is lent.

A kernel file of ``kernels/`` is compiled by g++ with ``cuda_on_cpu.h`` (CUDA's built-ins: a
few blocks at a time, their threads fibers that interleave at barriers, in a seeded order) into
a shared library with one launch function per declared name expression. :func:`launch` takes
what ``cuLaunchKernel`` takes (the function, grid, block, dynamic shared bytes and the packed
``void**`` arguments), so the host path's own launches run it unchanged through the stand-in
CuPy of ``fake_cupy.py``, whose arrays are host memory.

It checks a kernel's logic, not its speed; the header's comment says what it models.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from spla.backends.cuda import runtime

HEADER = Path(__file__).with_name("cuda_on_cpu.h")
COMPILER = os.environ.get("CXX", "g++")
FLAGS = ("-std=c++17", "-O1", "-shared", "-fPIC", "-ffp-contract=off", "-Wno-unknown-pragmas")
_libraries: dict = {}  # (filename, options, names) -> (CDLL, {name: launch function})


def available() -> bool:
    return shutil.which(COMPILER) is not None


def _rewrite(text: str) -> str:
    """A kernel source with its shared memory made per block: an ``extern __shared__`` array
    (dynamic shared memory) points at the block's bytes, and each ``__shared__`` variable is the
    block's own copy, 0xff bytes (NaN, -1) until the block writes it."""
    text = re.sub(r"extern\s+__shared__\s+(?:__align__\(\d+\)\s+)?([\w ]+?)\s+(\w+)\[\];",
                  r"\1* const \2 = static_cast<\1*>(spla_emu::dynamic_shared());", text)
    return re.sub(r"__shared__\s+(?:__align__\(\d+\)\s+)?([\w:]+(?:\s+[\w:]+)*?)\s+(\w+)((?:\[[^\]]+\])*)\s*;",
                  r"static const char \2_tag = 0; auto& \2 = spla_emu::block_shared<\1\3>(&\2_tag);", text)


#: A build folder (one a version of kernels/, up to ~10 MB with its libraries) not used for this long
#: is removed when a new one is made; other checkouts' folders in use stay.
UNUSED_SECONDS = 3 * 24 * 3600


def _prune(parent: Path) -> None:
    if not parent.is_dir():
        return
    now = time.time()
    for old in parent.iterdir():
        try:
            if now - old.stat().st_mtime > UNUSED_SECONDS:
                shutil.rmtree(old, ignore_errors=True)
        except FileNotFoundError:  # a concurrent worker's prune came first
            pass


@functools.cache
def _build_folder() -> Path:
    """kernels/ rewritten for g++ (:func:`_rewrite`, every .cu and .cuh, the folders kept, so each
    file's includes find the rewritten headers), in a folder named by a hash of it all."""
    kernel_dir = runtime.kernel_dir()
    files = {p.relative_to(kernel_dir): _rewrite(p.read_text())
             for p in sorted(kernel_dir.rglob("*")) if p.suffix in (".cu", ".cuh")}
    digest = hashlib.sha256("\0".join([HEADER.read_text(), *FLAGS, *(f"{k}\0{v}" for k, v in files.items())])
                            .encode()).hexdigest()[:16]
    folder = Path(tempfile.gettempdir()) / f"spla-emulated-{os.getuid()}" / digest
    if folder.exists():
        os.utime(folder)  # in use: _prune keeps it
    else:
        _prune(folder.parent)
        partial = folder.with_name(f"{digest}.{os.getpid()}.tmp")  # whole or not at all, for a concurrent worker
        for relative, text in files.items():
            (partial / relative).parent.mkdir(parents=True, exist_ok=True)
            (partial / relative).write_text(text)
        try:
            partial.rename(folder)
        except OSError:  # another worker's copy came first
            shutil.rmtree(partial)
    return folder


def _library(source: runtime.KernelSource):
    key = (source.filename, source.options, source.names)
    if key in _libraries:
        return _libraries[key]
    folder = _build_folder()
    defines = [o for o in source.options if o.startswith("-D")]
    stubs = "\n".join(
        f'extern "C" int spla_emu_{i}(unsigned grid_x, unsigned grid_y, unsigned block_x, unsigned block_y,\n'
        f"                           unsigned shared, void** params, int cooperative, unsigned long long seed,\n"
        f"                           const char** error) {{\n"
        f"    return spla_emu::launch(&{name}, grid_x, grid_y, block_x, block_y, shared, params, cooperative, seed,\n"
        f"                            error);\n}}"
        for i, name in enumerate(source.names))
    code = f'#include "{HEADER}"\n#include "{folder / source.filename}"\n{stubs}\n'
    stem = f"{Path(source.filename).stem}-{hashlib.sha256((code + ''.join(defines)).encode()).hexdigest()[:16]}"
    shared = folder / f"{stem}.so"
    if not shared.exists():
        cpp = folder / f"{stem}.{os.getpid()}.cpp"  # one a worker: pytest-xdist
        cpp.write_text(code)
        partial = shared.with_suffix(f".{os.getpid()}.tmp")
        done = subprocess.run([COMPILER, *FLAGS, f"-I{folder}", *defines, str(cpp), "-o", str(partial)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"g++ could not build {source.filename} for the CPU ({cpp}):\n{done.stderr[-4000:]}")
        cpp.unlink()
        partial.replace(shared)  # whole or not at all, for a concurrent worker
    library = ctypes.CDLL(str(shared))
    functions = {}
    for i, name in enumerate(source.names):
        function = getattr(library, f"spla_emu_{i}")
        function.restype = ctypes.c_int
        function.argtypes = [ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint,
                             ctypes.c_void_p, ctypes.c_int, ctypes.c_ulonglong, ctypes.POINTER(ctypes.c_char_p)]
        functions[name] = function
    _libraries[key] = (library, functions)
    return _libraries[key]


def launch(source: runtime.KernelSource, name: str, grid, block, shared_mem: int, params: int,
           seed: int = 0, cooperative: bool = False) -> None:
    """Run kernel ``name`` of ``source`` over ``grid`` (blocks in x, or (x, y)) of ``block`` threads
    (in x, or (x, y)) with the packed arguments at ``params`` (``void**``, as cuLaunchKernel's);
    ``seed`` orders the blocks and threads (0: in order); ``cooperative``: every block resident at once."""
    grid_x, grid_y = (grid, 1) if isinstance(grid, int) else (tuple(grid) + (1,))[:2]
    block_x, block_y = (block, 1) if isinstance(block, int) else (tuple(block) + (1,))[:2]
    function = _library(source)[1][name]
    error = ctypes.c_char_p()
    if function(grid_x, grid_y, block_x, block_y, shared_mem, params, int(cooperative), seed,
                ctypes.byref(error)) != 0:
        raise RuntimeError(f"{name} on the CPU: {error.value.decode()}")
