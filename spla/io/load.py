"""``spla.load``: every matrix source the API and the CLI accept, in one function.

A source is one of

- a file: Matrix Market (``.mtx``, ``.mtx.gz``, see :mod:`spla.io.mmio`), a SNAP
  edge list (``.txt``, ``.txt.gz``, see :mod:`spla.io.snap`), or an ``.npz``
  written by spla (or by ``scipy.sparse.save_npz`` for CSR);
- a generator spec such as ``gen:weblike``, ``gen:poisson2d:1024`` or
  ``gen:random:100000:16`` (see :mod:`spla.io.generators`);
- a catalogue name such as ``web-Google`` (see :mod:`spla.io.catalog`), found in
  the folder ``spla fetch`` downloads into.

Parsed text files are cached as binary ``.npz`` beside the source
(:mod:`spla.io.cache`), so the second load of a large file is several times
faster. What the loader learnt (format, symmetry, duplicates summed, parser,
cache hit, seconds) is kept with the matrix: see :func:`load_info`.
"""

from __future__ import annotations

import os
import stat
import sys
import time
import zipfile
from pathlib import Path

from ..csr import CSRMatrix
from ..errors import InputError, MatrixFormatError, SplaError
from . import cache as _cache

GEN_PREFIX = "gen:"
FILE_KINDS = {".mtx": "mtx", ".mtx.gz": "mtx", ".txt": "snap", ".txt.gz": "snap", ".npz": "npz"}
DEFAULT_STAND_IN = "gen:weblike"
# progress is shown by default for files at least this large, and only on a terminal
PROGRESS_MIN_BYTES = 32 << 20


def file_kind(path: Path) -> str | None:
    """'mtx', 'snap' or 'npz' from the file name, None if spla cannot read it."""
    name = path.name.lower()
    for suffix in sorted(FILE_KINDS, key=len, reverse=True):
        if name.endswith(suffix):
            return FILE_KINDS[suffix]
    return None


def matrix_stem(path: Path) -> str:
    """``web-Google`` for ``matrices/web-Google.mtx.gz``."""
    name = path.name
    for suffix in (".gz", ".mtx", ".txt", ".npz", ".tar"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    return name


def load_info(A) -> dict:
    """What :func:`load` recorded about where ``A`` came from (empty if it did not load it)."""
    return dict(A._cache.get("load_info", {})) if isinstance(A, CSRMatrix) else {}


def _attach(A: CSRMatrix, info: dict) -> CSRMatrix:
    A._cache["load_info"] = info
    return A


# ------------------------------------------------------------------ progress
class _StderrProgress:
    """Stage and percentage on one stderr line, redrawn at most ten times a second."""

    def __init__(self, label: str):
        self.label = label
        self.tty = sys.stderr.isatty()
        self.start = time.perf_counter()
        self.last_draw = 0.0
        self.last_stage: str | None = None

    def __call__(self, stage: str, fraction=None) -> None:
        now = time.perf_counter()
        if stage == self.last_stage and (not self.tty or now - self.last_draw < 0.1):
            return
        self.last_stage, self.last_draw = stage, now
        percent = "" if fraction is None else f" {100 * fraction:3.0f}%"
        text = f"spla: loading {self.label}: {stage}{percent} ({now - self.start:.1f} s)"
        if self.tty:
            sys.stderr.write("\r\033[K" + text)
        else:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def finish(self, how: str) -> None:
        text = f"spla: loaded {self.label} {how} in {time.perf_counter() - self.start:.2f} s"
        sys.stderr.write(("\r\033[K" if self.tty else "") + text + "\n")
        sys.stderr.flush()


def _reporter(progress, label: str, size: int):
    if callable(progress):
        return progress, None
    if progress is None:
        progress = size >= PROGRESS_MIN_BYTES and sys.stderr.isatty()
    if not progress:
        return None, None
    printer = _StderrProgress(label)
    return printer, printer


# ------------------------------------------------------------------ sources
def _catalog():
    try:
        from . import catalog
    except ImportError:
        return None
    return catalog


def _catalog_entry(name: str):
    """The catalogue's entry for ``name``, or None (also when there is no catalogue)."""
    catalog = _catalog()
    if catalog is None:
        return None
    try:
        return catalog.get(name)
    except (KeyError, LookupError, ValueError, SplaError):  # unknown name, or no catalogue file
        return None


def _missing(path: Path, source, looked_in: Path | None = None) -> InputError:
    stem = matrix_stem(path)
    entry = _catalog_entry(stem)
    if entry is not None:
        stand_in = getattr(entry, "stand_in", None) or DEFAULT_STAND_IN
        where = "no such file" if looked_in is None else f"not downloaded yet (no {looked_in})"
        return InputError(f"{source}: {where}; download it with `spla fetch {entry.name}` "
                          f"(needs the network), or run on its synthetic stand-in: `spla spmv {stand_in}`")
    return InputError(f"{source}: no such file (a SOURCE is a .mtx, .mtx.gz, .txt, .txt.gz or .npz file, "
                      f"a catalogue name like web-Google, or a generator spec like {DEFAULT_STAND_IN})")


def _resolve_name(source: str) -> Path | None:
    """A catalogue name's local file when it has been fetched; None when not a catalogue name."""
    entry = _catalog_entry(source)
    if entry is None:
        return None
    local = _catalog().local_path(entry.name)
    if local is None or not Path(local).is_file():
        raise _missing(Path(source), source, looked_in=local)
    return Path(local)


def _check_readable(path: Path, source) -> os.stat_result:
    """The source's stat, after refusing what is not a readable regular file (stat only, never open)."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise _missing(path, source) from None
    except OSError as exc:
        raise InputError(f"{source}: cannot stat the file ({exc.strerror or exc})") from None
    if stat.S_ISDIR(info.st_mode):
        raise InputError(f"{source}: is a folder, not a matrix file")
    if not stat.S_ISREG(info.st_mode):
        kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(info.st_mode) else "a device" if
                stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode) else "a socket" if
                stat.S_ISSOCK(info.st_mode) else "not a regular file")
        raise InputError(f"{source}: is {kind}; spla reads regular files only (it reads a file more than once)")
    if not os.access(path, os.R_OK):
        raise InputError(f"{source}: cannot read the file (permission denied)")
    if file_kind(path) is None:
        raise InputError(f"{source}: unknown file type; spla reads .mtx, .mtx.gz (Matrix Market), "
                         f".txt, .txt.gz (SNAP edge list) and .npz (saved by spla)")
    return info


def _read_file(path: Path, kind: str | None, progress):
    if kind == "mtx":
        from .mmio import read_mtx

        return read_mtx(path, progress=progress)
    if kind == "snap":
        from .snap import read_snap

        return read_snap(path, progress=progress)
    try:
        _cache.check_archive(path)  # declared sizes first: a zip bomb is refused before it inflates
        A, meta = _cache.read_npz(path)
    except (ValueError, KeyError, OSError, zipfile.BadZipFile) as exc:
        if isinstance(exc, (PermissionError, IsADirectoryError)):
            raise
        raise MatrixFormatError(f"not a matrix .npz: {exc}", path=path) from None
    return A, {"format": "npz", **meta.get("info", {})}


def load(source, *, dtype=None, cache: bool = True, progress=None) -> CSRMatrix:
    """Load a matrix from a file, a catalogue name or a ``gen:`` spec.

    Parameters
    ----------
    source : str, os.PathLike or CSRMatrix
        See the module docstring. A CSRMatrix is returned as it is (converted
        to ``dtype`` if given).
    dtype : float32 or float64, optional
        Value type of the result; default is the source's own (float64 for
        text files, whatever was saved for ``.npz``).
    cache : bool
        Read and write the binary cache for text files (default True).
    progress : bool or callable, optional
        ``True`` shows progress on stderr, ``False`` never; the default shows
        it for files of 32 MB or more when stderr is a terminal. A callable is
        called as ``progress(stage, fraction)`` with fraction in [0, 1] or None.

    Returns
    -------
    CSRMatrix
        On the host. :func:`load_info` tells how it was loaded.

    Raises
    ------
    InputError
        Missing, unreadable or unknown source (one line; for a missing
        catalogue matrix it says how to fetch it and names a stand-in).
    MatrixFormatError
        A malformed file, naming the file and line.

    See Also
    --------
    scipy.io.mmread, scipy.sparse.load_npz
    """
    if isinstance(source, CSRMatrix):
        return source if dtype is None else source.astype(dtype)
    if isinstance(source, str) and source.startswith(GEN_PREFIX):
        from . import generators

        start = time.perf_counter()
        A = generators.from_spec(source, dtype=dtype)
        return _attach(A, {"source": source, "format": "generated",
                           "load_seconds": time.perf_counter() - start, "cache": None})
    if not isinstance(source, (str, os.PathLike)):
        raise InputError(f"cannot load a matrix from a {type(source).__name__}")
    path = Path(source)
    if isinstance(source, str) and not path.exists() and file_kind(path) is None:  # NAME or GROUP/NAME
        path = _resolve_name(source) or path
    stat_result = _check_readable(path, source)
    kind = file_kind(path) or "npz"  # _check_readable refused unknown kinds
    report, printer = _reporter(progress, path.name, stat_result.st_size)
    start = time.perf_counter()
    hit = _cache.load(path, stat_result) if cache and kind != "npz" else None
    if hit is not None:
        A, info = hit
        how = "from its cache"
    else:
        try:
            A, info = _read_file(path, kind, report)
        except BaseException:
            if printer is not None:
                sys.stderr.write("\n")
            raise
        info["cache"] = None
        if cache and kind != "npz":
            if report:
                report("writing cache", None)
            written = _cache.store(path, stat_result, A, info)
            info["cache"] = None if written is None else str(written)
        how = "parsed"
    info.update(source=str(source), path=str(path), cache_hit=hit is not None,
                load_seconds=time.perf_counter() - start)
    if printer is not None:
        printer.finish(how)
    _attach(A, info)
    if dtype is not None:
        A = _attach(A.astype(dtype), info)
    return A


def save_npz(path, A) -> Path:
    """Save a matrix as an spla ``.npz`` that :func:`load` reads back exactly.

    See Also
    --------
    scipy.sparse.save_npz
    """
    A = A if isinstance(A, CSRMatrix) else CSRMatrix(A)  # the values' dtype kept, not the kernels' float
    return _cache.write_npz(path, A, {"info": {"saved_by": "spla.io.save_npz"}})
