"""The binary load cache: a parsed matrix saved as ``.npz`` so the next load skips parsing.

The cache of ``matrices/web-Google.mtx.gz`` is ``matrices/web-Google.mtx.gz.spla.npz``
beside it; when that folder is not writable it goes to the user cache folder
(``$SPLA_CACHE_DIR``, else ``$XDG_CACHE_HOME/spla``, else ``~/.cache/spla``)
under a name that includes a hash of the source's absolute path.

A cache entry is used only when it records the source's current size,
``st_mtime_ns``, ``st_ctime_ns``, inode and a hash of its first and last
:data:`HASH_BYTES` (the whole file when it is smaller than twice that), and
this module's :data:`FORMAT_VERSION`; anything else (a touched or edited
source, even one whose size and mtime were put back by ``touch -r``,
``cp -p`` or ``rsync -t``; an old spla; a damaged or foreign file) is ignored
and the cache is rebuilt. Entries are written to a temporary file in the
target folder and renamed into place, so an error or Ctrl-C mid-write leaves
no partial file; a temporary left by a killed process is removed by the next
load once it is :data:`STALE_TEMP_SECONDS` old.

The arrays are stored uncompressed, and a cache hit memory-maps them
(copy-on-write) straight out of the archive instead of reading them: the
load costs the file's page-cache look-ups and one validation pass.
"""

from __future__ import annotations

import contextlib
import hashlib
import io as _stdio
import json
import os
import struct
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np

FORMAT_VERSION = 2
SUFFIX = ".spla.npz"
_MAGIC = "spla-csr"
HASH_BYTES = 1 << 20
STALE_TEMP_SECONDS = 3600
_ARRAYS = ("data", "indices", "indptr")


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


def content_hash(path: Path, size: int) -> str:
    """SHA-256 of the first and last HASH_BYTES of the file (all of it when small)."""
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        if size <= 2 * HASH_BYTES:
            digest.update(stream.read())
        else:
            digest.update(stream.read(HASH_BYTES))
            stream.seek(size - HASH_BYTES)
            digest.update(stream.read(HASH_BYTES))
    return digest.hexdigest()


def source_key(stat: os.stat_result, path: Path | None = None) -> dict:
    """What a cache entry must match: the file's identity, times, size and a content hash."""
    key: dict[str, object] = {
        "size": int(stat.st_size), "mtime_ns": int(stat.st_mtime_ns), "ctime_ns": int(stat.st_ctime_ns),
        "inode": int(stat.st_ino), "device": int(stat.st_dev), "version": FORMAT_VERSION}
    if path is not None:
        key["sha256_head_tail"] = content_hash(path, stat.st_size)
    return key


def remove_stale_temporaries(folder: Path, name: str) -> None:
    """Delete ``.NAME.*.tmp`` files in ``folder`` older than STALE_TEMP_SECONDS (left by a killed write)."""
    cutoff = time.time() - STALE_TEMP_SECONDS
    try:
        candidates = list(folder.glob(f".{name}.*.tmp"))
    except OSError:
        return
    for temporary in candidates:
        try:
            if temporary.is_file() and temporary.stat().st_mtime < cutoff:
                temporary.unlink()
        except OSError:
            continue


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
    from ..csr import CSRMatrix

    with np.load(path, allow_pickle=False) as archive:
        names = set(archive.files)
        if "meta" in names:
            meta = json.loads(archive["meta"].tobytes().decode("utf-8"))
            if meta.get("magic") != _MAGIC:
                raise ValueError("not an spla matrix file")
            shape = meta["shape"]
            if not (isinstance(shape, list) and len(shape) == 2
                    and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape)):
                raise ValueError(f"the shape must be two non-negative integers, found {shape!r:.60}")
            shape = tuple(shape)
        elif "format" in names:
            fmt = archive["format"].item()
            fmt = fmt.decode() if isinstance(fmt, bytes) else str(fmt)
            if fmt != "csr" or not {"shape", "data", "indices", "indptr"} <= names:
                raise ValueError(f"a SciPy {fmt!r} file; spla reads SciPy's CSR .npz files "
                                 f"(convert with scipy.sparse.save_npz(path, A.tocsr()))")
            raw_shape = archive["shape"]
            if raw_shape.dtype.kind not in "iu" or raw_shape.shape != (2,) or np.any(raw_shape < 0):
                raise ValueError(f"the shape must be two non-negative integers, found {raw_shape.tolist()!r:.60}")
            meta, shape = {}, tuple(int(s) for s in raw_shape)
        else:
            raise ValueError("neither an spla nor a SciPy CSR .npz file")
        for name in ("indices", "indptr"):
            if archive[name].dtype.kind not in "iu":
                raise ValueError(f"{name} must be integers, found {archive[name].dtype}")
        A = CSRMatrix(archive["data"], archive["indices"], archive["indptr"], shape)
    return A, meta


def check_archive(path, *, budget_check=True) -> dict:
    """Declared sizes of an ``.npz``'s members, checked before anything is decompressed.

    Returns ``{member: (shape, dtype, data offset or None)}``. Refuses (ValueError)
    members that are not ``.npy`` arrays, object arrays, a declared size that does
    not match the array header (a zip bomb declares small and inflates big, or the
    reverse), and, with ``budget_check``, totals beyond the host memory budget.
    """
    from .memory import check_host_memory

    arrays, total = {}, 0
    with open(path, "rb") as raw, zipfile.ZipFile(raw) as archive:
        for info in archive.infolist():
            if not info.filename.endswith(".npy"):
                raise ValueError(f"member {info.filename[:60]!r} is not a .npy array")
            with archive.open(info) as member:
                header = member.read(16 + 65536)  # magic and header (bounded), decompressed lazily
            stream = _stdio.BytesIO(header)
            version = np.lib.format.read_magic(stream)
            shape, fortran, dtype = (np.lib.format.read_array_header_1_0(stream) if version == (1, 0)
                                     else np.lib.format.read_array_header_2_0(stream))
            if dtype.hasobject:
                raise ValueError(f"member {info.filename[:60]!r} holds Python objects")
            nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
            header_bytes = stream.tell()
            if header_bytes + nbytes != info.file_size:
                raise ValueError(f"member {info.filename[:60]!r} declares {info.file_size} bytes but its "
                                 f"array needs {header_bytes + nbytes}")
            offset = None
            if info.compress_type == zipfile.ZIP_STORED and not fortran:
                raw.seek(info.header_offset)
                local = raw.read(30)
                if local[:4] == b"PK\x03\x04":
                    name_len, extra_len = struct.unpack("<HH", local[26:30])
                    offset = info.header_offset + 30 + name_len + extra_len + header_bytes
            arrays[info.filename[:-4]] = (shape, dtype, offset)
            total += nbytes
    _check_csr_members(arrays)
    if budget_check:
        check_host_memory(total, f"{Path(path).name} ({total:,} bytes once decompressed)")
    return arrays


# the small members (spla's meta, SciPy's shape and format) may not declare more than this
SMALL_MEMBER_BYTES = 1 << 20


def _check_csr_members(arrays: dict) -> None:
    """The CSR members agree with each other by their declared shapes alone."""
    for name, (shape, dtype, _) in arrays.items():
        size = int(np.prod(shape, dtype=object)) * dtype.itemsize
        if name not in _ARRAYS and size > SMALL_MEMBER_BYTES:
            raise ValueError(f"member {name[:60]!r} declares {size:,} bytes (at most {SMALL_MEMBER_BYTES:,} "
                             f"expected)")
    if not set(_ARRAYS) <= set(arrays):
        return  # read_npz says what is missing
    for name in _ARRAYS:
        if len(arrays[name][0]) != 1:
            raise ValueError(f"{name} must be one-dimensional, declared shape {arrays[name][0]}")
    for name in ("indices", "indptr"):
        if arrays[name][1].kind not in "iu":
            raise ValueError(f"{name} must be integers, declared {arrays[name][1]}")
    if arrays["data"][0] != arrays["indices"][0]:
        raise ValueError(f"data declares {arrays['data'][0][0]:,} entries but indices "
                         f"{arrays['indices'][0][0]:,}")


def read_mapped(path):
    """An spla cache archive written uncompressed, its arrays memory-mapped copy-on-write.

    Falls back to :func:`read_npz` for compressed or foreign archives.
    """
    from ..csr import CSRMatrix

    arrays = check_archive(path, budget_check=False)
    if not set(_ARRAYS) | {"meta"} <= set(arrays) or any(arrays[n][2] is None for n in _ARRAYS):
        return read_npz(path)
    size = os.stat(path).st_size
    with np.load(path, allow_pickle=False) as archive:
        meta = json.loads(archive["meta"].tobytes().decode("utf-8"))
    if meta.get("magic") != _MAGIC:
        raise ValueError("not an spla matrix file")
    mapped = {}
    for name in _ARRAYS:
        shape, dtype, offset = arrays[name]
        count = int(np.prod(shape))
        if len(shape) != 1 or offset + count * dtype.itemsize > size:
            raise ValueError(f"{name} is truncated or not one-dimensional")
        mapped[name] = np.empty(0, dtype) if count == 0 else np.memmap(path, dtype, "c", offset, (count,))
    for name in ("indices", "indptr"):
        if mapped[name].dtype.kind not in "iu":
            raise ValueError(f"{name} must be integers")
    A = CSRMatrix(mapped["data"], mapped["indices"], mapped["indptr"], tuple(meta["shape"]))
    return A, meta


def load(source: Path, stat: os.stat_result):
    """The cached (CSRMatrix, info) of ``source`` if a valid entry exists, else None."""
    key = None
    for path in candidate_paths(source):
        remove_stale_temporaries(path.parent, path.name)
        if not path.is_file():
            continue
        try:
            A, meta = read_mapped(path)
        except Exception:  # noqa: BLE001 - damaged, truncated, foreign: ignore and rebuild
            continue
        if key is None:
            key = source_key(stat, source)
        if meta.get("source") == key:
            info = dict(meta.get("info", {}))
            info["cache"] = str(path)
            return A, info
    return None


def store(source: Path, stat: os.stat_result, A, info: dict) -> Path | None:
    """Write the cache entry for ``source``; None when no location is writable."""
    meta = {"source": source_key(stat, source), "info": info}
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
