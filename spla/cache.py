"""The binary load cache: a parsed matrix saved as ``.npz`` so the next load skips parsing.

The cache of ``matrices/web-Google.mtx.gz`` is ``matrices/web-Google.mtx.gz.spla.npz``
beside it; when that folder is not writable it goes to the user cache folder
(``$SPLA_CACHE_DIR``, else ``$XDG_CACHE_HOME/spla``, else ``~/.cache/spla``)
under a name that includes a hash of the source's absolute path.

A cache entry is used only when it records the source's current size and
``st_mtime_ns`` and this module's :data:`FORMAT_VERSION`; anything else (a
touched or edited source, an old spla, a damaged or foreign file) is ignored
and the cache is rebuilt. Entries are written to a temporary file in the
target folder and renamed into place, so an error or Ctrl-C mid-write leaves
no partial file.

The arrays are stored uncompressed: reading them back is a few memory copies
(about 10x faster than parsing text even from a warm page cache).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from pathlib import Path

import numpy as np

FORMAT_VERSION = 1
SUFFIX = ".spla.npz"
_MAGIC = "spla-csr"


def user_cache_dir() -> Path:
    """Where caches go when the source's folder is not writable."""
    if os.environ.get("SPLA_CACHE_DIR"):
        return Path(os.environ["SPLA_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "spla"


def candidate_paths(source: Path) -> list[Path]:
    """Cache locations for ``source``, in the order they are tried."""
    source = Path(source).resolve()
    digest = hashlib.sha1(str(source).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return [source.with_name(source.name + SUFFIX),
            user_cache_dir() / f"{source.name}-{digest}{SUFFIX}"]


def source_key(stat: os.stat_result) -> dict:
    return {"size": int(stat.st_size), "mtime_ns": int(stat.st_mtime_ns), "version": FORMAT_VERSION}


@contextlib.contextmanager
def atomic_file(path):
    """A binary file object whose content appears at ``path`` only when the block succeeds.

    It is a temporary file in the same folder, renamed over ``path`` at the
    end (atomic on POSIX and Windows); on any exception, Ctrl-C included, the
    temporary file is removed and ``path`` is left as it was.
    """
    path = Path(path)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as stream:
            yield stream
        os.chmod(tmp_name, 0o666 & ~_umask())  # mkstemp makes 0600; give the usual file mode
        os.replace(tmp_name, path)
    except BaseException:
        try:
            os.unlink(tmp_name)
        except FileNotFoundError:
            pass
        raise


def write_npz(path, A, meta: dict | None = None) -> Path:
    """Save a host CSRMatrix as an spla ``.npz`` file, atomically.

    See Also
    --------
    scipy.sparse.save_npz
    """
    path = Path(path)
    A = A.to_host()
    header = {"magic": _MAGIC, "version": FORMAT_VERSION, "shape": list(A.shape), **(meta or {})}
    encoded = np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8)
    with atomic_file(path) as stream:
        # format/shape/_is_array are the keys scipy.sparse.load_npz reads: the file loads there as a csr_array
        np.savez(stream, data=A.data, indices=A.indices, indptr=A.indptr, meta=encoded,
                 format=np.array(b"csr"), shape=np.array(A.shape, dtype=np.int64), _is_array=np.array(True))
    return path


def read_npz(path):
    """Read an spla ``.npz`` (or a ``scipy.sparse.save_npz`` CSR file).

    Returns
    -------
    A : CSRMatrix
    meta : dict
        What :func:`write_npz` recorded (empty for SciPy's files).

    Raises
    ------
    ValueError, OSError, KeyError
        For damaged or foreign files (the cache treats any of them as a miss).
    """
    from .csr import CSRMatrix

    with np.load(path, allow_pickle=False) as archive:
        names = set(archive.files)
        if "meta" in names:
            meta = json.loads(archive["meta"].tobytes().decode("utf-8"))
            if meta.get("magic") != _MAGIC:
                raise ValueError("not an spla matrix file")
            shape = tuple(meta["shape"])
        elif "format" in names:
            fmt = archive["format"].item()
            fmt = fmt.decode() if isinstance(fmt, bytes) else str(fmt)
            if fmt != "csr" or not {"shape", "data", "indices", "indptr"} <= names:
                raise ValueError(f"a SciPy {fmt!r} file; spla reads SciPy's CSR .npz files "
                                 f"(convert with scipy.sparse.save_npz(path, A.tocsr()))")
            meta, shape = {}, tuple(int(s) for s in archive["shape"])
        else:
            raise ValueError("neither an spla nor a SciPy CSR .npz file")
        A = CSRMatrix(archive["data"], archive["indices"], archive["indptr"], shape)
    return A, meta


def load(source: Path, stat: os.stat_result):
    """The cached (CSRMatrix, info) of ``source`` if a valid entry exists, else None."""
    key = source_key(stat)
    for path in candidate_paths(source):
        if not path.is_file():
            continue
        try:
            A, meta = read_npz(path)
        except Exception:  # damaged, truncated, foreign: ignore and rebuild
            continue
        if meta.get("source") == key:
            info = dict(meta.get("info", {}))
            info["cache"] = str(path)
            return A, info
    return None


def store(source: Path, stat: os.stat_result, A, info: dict) -> Path | None:
    """Write the cache entry for ``source``; None when no location is writable."""
    meta = {"source": source_key(stat), "info": info}
    for path in candidate_paths(source):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            return write_npz(path, A, meta)
        except OSError:
            continue
    return None


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
