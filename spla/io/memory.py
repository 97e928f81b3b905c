"""Host memory budget: how much spla may allocate now, and a check that says so in one line.

The budget is the smallest of

- ``MemAvailable`` in ``/proc/meminfo`` (what the kernel can hand out without
  swapping; Linux over-commits, so an allocation beyond it tends to end in the
  out-of-memory killer rather than a ``MemoryError``),
- the cgroup v2 limit (``memory.max`` - ``memory.current``) of a container,
- the address-space limit (``ulimit -v``, ``RLIMIT_AS``) minus the address
  space this process already uses.

Where none of these can be read (not Linux), there is no budget and every
check passes; an allocation that then fails still becomes one line through
the CLI.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import HostMemoryError

GIB = 1 << 30


def _meminfo_available() -> int | None:
    try:
        with open("/proc/meminfo") as stream:
            for line in stream:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _cgroup_available() -> int | None:
    root = Path("/sys/fs/cgroup")
    try:
        limit = (root / "memory.max").read_text().strip()
        if limit == "max":
            return None
        return max(0, int(limit) - int((root / "memory.current").read_text().strip()))
    except (OSError, ValueError):
        return None


def _address_space_available() -> int | None:
    try:
        import resource
    except ImportError:
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY or soft < 0:
        return None
    used = 0
    try:
        with open("/proc/self/status") as stream:
            for line in stream:
                if line.startswith("VmSize:"):
                    used = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        pass
    return max(0, soft - used)


def available_memory() -> tuple[int | None, str]:
    """Bytes spla may still allocate on the host, and which limit sets it (None: unknown)."""
    candidates = [(value, name) for value, name in (
        (_meminfo_available(), "MemAvailable in /proc/meminfo"),
        (_cgroup_available(), "the container's memory limit"),
        (_address_space_available(), "the address-space limit, ulimit -v"),
    ) if value is not None]
    if not candidates:
        return None, "unknown"
    return min(candidates)


def check_host_memory(needed: int, what: str) -> None:
    """Raise :class:`spla.errors.HostMemoryError` when ``needed`` bytes will not fit.

    ``SPLA_MEMORY_BUDGET`` (bytes, or with a ``K``/``M``/``G`` suffix) lowers
    the budget further, for tests and shared machines.
    """
    available, limit = available_memory()
    override = os.environ.get("SPLA_MEMORY_BUDGET")
    if override:
        budget = parse_bytes(override)
        if available is None or budget < available:
            available, limit = budget, "SPLA_MEMORY_BUDGET"
    if available is not None and needed > available:
        raise HostMemoryError(int(needed), int(available), what, limit)


def parse_bytes(text: str) -> int:
    """``"512M"`` -> 536870912; plain integers are bytes."""
    text = text.strip().upper().removesuffix("B").removesuffix("I")
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}.get(text[-1:], 1)
    number = text[:-1] if scale != 1 else text
    try:
        return int(float(number) * scale)
    except ValueError:
        from ..errors import InputError

        raise InputError(f"SPLA_MEMORY_BUDGET={text!r} is not a size such as 512M or 4G") from None
