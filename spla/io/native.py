"""Host C helpers: compiled on first use with the system C compiler, loaded with ctypes.

spla compiles its CUDA kernels at run time (NVRTC); the host loops that NumPy
cannot express in a few whole-array passes are built the same way: the
Matrix Market body check of :mod:`spla.io.mmio` (``mtx_check.c`` beside this
module), the ILU(0) elimination and the greedy colouring of :mod:`spla.linalg`
(``ilu0.c`` and ``ordering.c`` there), the CPU backend's SpMV and SpMM
(``spla/backends/csr_product.c``) and its CG loop (``spla/backends/cg_loop.c``).
Each is compiled once per machine and source version with ``$CC`` (else
``cc``) into ``<user cache folder>/native/`` (see
:func:`spla.io.cache.user_cache_dir`) and loaded with ctypes, whose calls
release the GIL, so several threads check chunks at once.

Nothing here is required. Without a compiler, when the build fails, or with
``SPLA_NATIVE=off``, :func:`mtx_checker`, :func:`ilu0_eliminator`,
:func:`greedy_colorer`, :func:`triangle_leveler`, :func:`csr_product_kernel`,
:func:`cg_loop_kernel` and :func:`dot_kernel` return None and the callers use their
NumPy or SciPy paths: the same verdicts,
colours, levels and bits (``tests/io/test_io_native.py``,
``tests/linalg/test_ilu_trisolve.py``, ``tests/linalg/test_ordering.py`` and
``tests/ops/test_csr_product.py`` hold them equal), slower; CG's NumPy steps give
the loop's iterates to rounding (its sums run in another order,
``tests/linalg/test_cpu_cg_loop.py``). :func:`status`
says how the body check runs, and why.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import platform
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

NATIVE_ENV = "SPLA_NATIVE"
MTX_CHECK_SOURCE = Path(__file__).with_name("mtx_check.c")
ILU0_SOURCE = Path(__file__).resolve().parents[1] / "linalg" / "ilu0.c"
ORDERING_SOURCE = Path(__file__).resolve().parents[1] / "linalg" / "ordering.c"
CSR_PRODUCT_SOURCE = Path(__file__).resolve().parents[1] / "backends" / "csr_product.c"
CG_LOOP_SOURCE = Path(__file__).resolve().parents[1] / "backends" / "cg_loop.c"
# no fused multiply-adds: the ILU(0) and product kernels promise the bits of their NumPy/SciPy paths;
# -pthread for the CG loop's threads
FLAGS = ("-O3", "-std=c99", "-ffp-contract=off", "-pthread", "-shared", "-fPIC")
COMPILE_SECONDS = 120


def compiler() -> list[str]:
    """The C compiler command: ``$CC`` split like a shell would, else ``cc``."""
    return shlex.split(os.environ.get("CC") or "") or ["cc"]


def disabled() -> bool:
    """True when ``$SPLA_NATIVE`` is off, 0, no or false."""
    return os.environ.get(NATIVE_ENV, "").strip().lower() in ("off", "0", "no", "false")


def library_path(source: Path, command: list[str]) -> Path:
    """Where the build of ``source`` with ``command`` is cached: the name hashes everything that shapes it."""
    from .cache import user_cache_dir

    key = hashlib.sha256(b"\0".join([source.read_bytes(), *(part.encode() for part in (*command, *FLAGS)),
                                     platform.machine().encode(), sys.platform.encode()])).hexdigest()[:16]
    return user_cache_dir() / "native" / f"{source.stem}-{key}.so"


def _private(path: Path) -> bool:
    """Whether ``path`` is ours and writable by nobody else (never load code others could have put there)."""
    info = path.stat()
    mine = not hasattr(os, "getuid") or info.st_uid == os.getuid()
    return mine and not info.st_mode & 0o022


def _build(source: Path, target: Path, command: list[str]) -> None:
    """Compile ``source`` into ``target`` through a temporary file renamed into place (concurrent builds are safe)."""
    from .cache import remove_stale_temporaries

    target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if not _private(target.parent):
        raise OSError(f"{target.parent} is writable by other users")
    remove_stale_temporaries(target.parent, target.name)
    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        done = subprocess.run([*command, *FLAGS, "-o", temporary, str(source)], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=COMPILE_SECONDS)
        if done.returncode:
            first = (done.stderr or done.stdout).strip().splitlines()[:1]
            raise OSError(f"{command[0]} exited with {done.returncode}: {' '.join(first)[:200]}")
        os.chmod(temporary, 0o700)
        os.replace(temporary, target)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def _load(source: Path, symbol: str, restype, argtypes: list):
    """``symbol`` of ``source``'s build as a ctypes function and how it was found, or None and why not."""
    command = compiler()
    try:
        target = library_path(source, command)
        if not (target.is_file() and _private(target)):
            _build(source, target, command)
        function = getattr(ctypes.CDLL(str(target)), symbol)
    except (OSError, AttributeError, subprocess.SubprocessError, ValueError) as exc:
        return None, f"unavailable: {exc}"  # no compiler, a failed build, a cache folder others can write
    function.restype = restype
    function.argtypes = argtypes
    return function, f"compiled ({target})"


@functools.cache
def _mtx_check_build():
    """``spla_mtx_check`` (once per process): see :func:`_load`."""
    return _load(MTX_CHECK_SOURCE, "spla_mtx_check", ctypes.c_int64,
                 [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32])


@functools.cache
def _ilu0_build():
    """``spla_ilu0`` (once per process): see :func:`_load`."""
    return _load(ILU0_SOURCE, "spla_ilu0", ctypes.c_int64, [ctypes.c_int64, *[ctypes.c_void_p] * 5])


#: ordering.c's functions: (result type, argument types)
_ORDERING_SIGNATURES = {
    "spla_greedy_color": (None, [ctypes.c_int64, *[ctypes.c_void_p] * 5]),
    "spla_natural_depth": (ctypes.c_int64, [ctypes.c_int64, *[ctypes.c_void_p] * 3]),
    "spla_triangle_levels": (ctypes.c_int64, [ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                                              ctypes.c_void_p]),
}


@functools.cache
def _ordering_build(symbol: str):
    """One of ordering.c's functions (once per process): see :func:`_load`."""
    return _load(ORDERING_SOURCE, symbol, *_ORDERING_SIGNATURES[symbol])


@functools.cache
def _csr_product_build(operation: str, value: str, index: str):
    """``spla_csr_<operation>_<value>_<index>`` (once per process): see :func:`_load`."""
    counts = 3 if operation == "spmm" else 2  # row range, and k for spmm
    return _load(CSR_PRODUCT_SOURCE, f"spla_csr_{operation}_{value}_{index}", None,
                 [ctypes.c_int64] * counts + [ctypes.c_void_p] * 5)


@functools.cache
def _cg_loop_build(value: str, index: str):
    """``spla_cg_loop_<value>_<index>`` (once per process): see :func:`_load`."""
    return _load(CG_LOOP_SOURCE, f"spla_cg_loop_{value}_{index}", ctypes.c_int64,
                 [ctypes.c_int64, *[ctypes.c_void_p] * 11, ctypes.c_int64, ctypes.c_int64, ctypes.c_double,
                  ctypes.c_int64, ctypes.c_void_p])


def mtx_checker():
    """The C body check as a ctypes function, or None (then use the NumPy check); see mtx_check.c."""
    return None if disabled() else _mtx_check_build()[0]


def ilu0_eliminator():
    """The C ILU(0) elimination as a ctypes function, or None (then the NumPy schedule); see
    spla/linalg/ilu0.c."""
    return None if disabled() else _ilu0_build()[0]


def greedy_colorer():
    """(``spla_greedy_color``, ``spla_natural_depth``) as ctypes functions, or None (then the NumPy
    level-by-level colouring); see spla/linalg/ordering.c."""
    if disabled():
        return None
    color, depth = _ordering_build("spla_greedy_color")[0], _ordering_build("spla_natural_depth")[0]
    return None if color is None or depth is None else (color, depth)


def triangle_leveler():
    """``spla_triangle_levels`` as a ctypes function, or None (then NumPy's frontier sweep); see
    spla/linalg/ordering.c."""
    return None if disabled() else _ordering_build("spla_triangle_levels")[0]


def csr_product_kernel(value_dtype, index_dtype, operation: str = "spmv"):
    """The C row-range SpMV (or ``operation="spmv_uniform"``, ``"spmm"``) for these value and index dtypes
    (float32/float64, int32/int64) as a ctypes function, or None (then SciPy's); see
    spla/backends/csr_product.c."""
    value, index = np.dtype(value_dtype), np.dtype(index_dtype)
    if disabled() or value.name not in ("float32", "float64") or index.name not in ("int32", "int64"):
        return None
    return _csr_product_build(operation, f"f{value.itemsize * 8}", f"i{index.itemsize * 8}")[0]


@functools.cache
def _dot_build(value: str):
    """``spla_dot_<value>`` of cg_loop.c (once per process): see :func:`_load`."""
    return _load(CG_LOOP_SOURCE, f"spla_dot_{value}", ctypes.c_double,
                 [ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p])


def dot_kernel(value_dtype):
    """cg_loop.c's a.b on the calling thread for float32 or float64 vectors as a ctypes function, or
    None (then NumPy's dot)."""
    value = np.dtype(value_dtype)
    if disabled() or value.name not in ("float32", "float64"):
        return None
    return _dot_build(f"f{value.itemsize * 8}")[0]


def cg_loop_kernel(value_dtype, index_dtype):
    """The C CG loop for these value and index dtypes (float32/float64, int32/int64) as a ctypes
    function, or None (then NumPy's steps); see spla/backends/cg_loop.c."""
    value, index = np.dtype(value_dtype), np.dtype(index_dtype)
    if disabled() or value.name not in ("float32", "float64") or index.name not in ("int32", "int64"):
        return None
    return _cg_loop_build(f"f{value.itemsize * 8}", f"i{index.itemsize * 8}")[0]


def status() -> str:
    """How the body check runs here: ``compiled (PATH)``, ``off ($SPLA_NATIVE)`` or ``unavailable: WHY``."""
    return f"off (${NATIVE_ENV})" if disabled() else _mtx_check_build()[1]


def check_lines(function, lines, width: int, index_fields: int, real: bool) -> int:
    """Run the C check on whole lines (bytes or a buffer): tokens, or -1 (see mtx_check.c)."""
    text = np.frombuffer(lines, dtype=np.uint8)
    return int(function(text.ctypes.data, text.size, width, index_fields, int(real)))
