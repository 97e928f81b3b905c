"""spla's exceptions.

Every error a user can cause derives from :class:`SplaError`, so the CLI can
print it as one line instead of a traceback. ``exit_code`` is what the CLI
exits with: 2 for bad arguments (as click does for usage errors), 1 for bad
data or a failed run.
"""

from __future__ import annotations


class SplaError(Exception):
    """Base class of every error spla raises on purpose."""

    exit_code = 1


class InputError(SplaError, ValueError):
    """A bad argument: unknown source, kernel or option, mismatched shapes."""

    exit_code = 2


class MatrixFormatError(SplaError, ValueError):
    """A matrix file that cannot be parsed; names the file and line."""

    def __init__(self, message: str, *, path=None, line: int | None = None):
        self.path = None if path is None else str(path)
        self.line = line
        where = ""
        if self.path is not None:
            where = self.path + (f":{line}" if line is not None else "") + ": "
        elif line is not None:
            where = f"line {line}: "
        super().__init__(where + message)


class KernelError(InputError):
    """An unknown kernel name or a launch configuration that cannot work."""


class NoGPUError(SplaError, RuntimeError):
    """GPU work was asked for where CuPy or a CUDA device is missing."""


class DeviceMemoryError(SplaError, MemoryError):
    """The data would not fit in free GPU memory (checked before copying)."""

    def __init__(self, needed: int, free: int, what: str = "matrix"):
        self.needed = needed
        self.free = free
        super().__init__(
            f"the {what} needs {needed / 2**30:.2f} GiB on the GPU but only "
            f"{free / 2**30:.2f} GiB is free; use --device cpu (or device='cpu')"
        )


class HostMemoryError(SplaError, MemoryError):
    """The work would not fit in host memory (estimated before allocating)."""

    def __init__(self, needed: int, available: int, what: str = "matrix", limit: str = "available memory"):
        self.needed = needed
        self.available = available
        super().__init__(
            f"the {what} needs about {needed / 2**30:.2f} GiB of host memory but only "
            f"{available / 2**30:.2f} GiB is available ({limit})"
        )
