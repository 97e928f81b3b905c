"""Where spla's CUDA sources are (``kernels/`` in a checkout, ``spla/kernels/`` in an installed
wheel), and one digest of them all.

The digest names the build of the kernels: the tuning cache keys its winners by it
(:func:`spla.planning.tune.fingerprint`), so a winner measured on kernels that have since changed
is not reused: ``auto`` takes its rule until the matrix is tuned again. spla's version alone does
not move between development builds.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

SUFFIXES = (".cu", ".cuh", ".h")


def kernel_dir() -> Path:
    """Where the .cu/.cuh sources are: inside the installed package, else the checkout."""
    here = Path(__file__).resolve().parent  # spla/
    for candidate in (here / "kernels", here.parent / "kernels"):
        if (candidate / "common.cuh").is_file():
            return candidate
    raise FileNotFoundError(f"spla's CUDA kernels were not found beside {here}")


@functools.cache
def digest() -> str:
    """A hex digest of every kernel source (its path under :func:`kernel_dir` and its bytes), read once
    a process; "none" where the sources are missing (no GPU path can run then anyway)."""
    try:
        root = kernel_dir()
    except FileNotFoundError:
        return "none"
    h = hashlib.blake2b(digest_size=16)
    for path in sorted(p for p in root.rglob("*") if p.suffix in SUFFIXES and p.is_file()):
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()
