"""``spla fetch``: download a catalogue matrix and unpack its ``.mtx``, safely.

The steps, each leaving nothing half-done behind:

1. Download the Matrix Market ``.tar.gz`` into ``DIR/NAME.tar.gz.part``,
   showing progress on stderr. A ``.part`` left by an interrupted run is
   resumed with an HTTP ``Range`` request (a server that ignores ranges
   restarts it); a connection that drops mid-way is resumed automatically a
   few times, then the error says to run the command again. The size is
   checked against ``Content-Length`` before the file is renamed to
   ``NAME.tar.gz``.
2. Find ``NAME.mtx`` in the archive and check its header's rows, cols and
   entry count against the catalogue *before* unpacking, then stream it
   into a temporary file in ``DIR`` while counting its entry lines, and
   rename it to ``DIR/NAME.mtx`` only when everything agrees. Ctrl-C or any
   failure removes the temporary file.

Only the standard library is used (``urllib``, ``tarfile``).
"""

from __future__ import annotations

import errno
import gzip
import http.client
import os
import re
import shutil
import socket
import sys
import tarfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib
from pathlib import Path

from ..errors import InputError, SplaError
from .catalog import Entry, default_catalog

CHUNK_BYTES = 1 << 20
USER_AGENT = "spla-fetch/0.1 (python-urllib)"
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz")
_UNREACHABLE_ERRNOS = (errno.ENETUNREACH, errno.EHOSTUNREACH, errno.ENETDOWN, errno.EHOSTDOWN)


class FetchError(SplaError):
    """A download or archive that did not work out; the message says what to do next."""


class NoNetworkError(FetchError):
    """The server cannot be reached at all (no network, DNS failure, refused connection)."""


class _Interrupted(Exception):
    """A transfer that stopped early; the .part file holds what arrived."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


# ------------------------------------------------------------------ progress
class _Progress:
    """Bytes, percentage and rate on one stderr line (redrawn on a terminal, sparse lines otherwise)."""

    def __init__(self, label: str, enabled: bool):
        self.label = label
        self.enabled = enabled
        self.tty = enabled and sys.stderr.isatty()
        self.start = time.perf_counter()
        self.last = 0.0
        self.last_decile = -1

    def update(self, done: int, total: int | None, first: int = 0) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        decile = -1 if not total else int(10 * done / total)
        if self.tty and now - self.last < 0.1 and done != total:
            return
        if not self.tty and decile == self.last_decile:
            return
        self.last, self.last_decile = now, decile
        rate = (done - first) / max(now - self.start, 1e-9) / 1e6
        size = f"{done / 1e6:.1f}" + (f"/{total / 1e6:.1f} MB {100 * done / total:3.0f}%" if total else " MB")
        text = f"spla: fetching {self.label}: {size} {rate:.1f} MB/s"
        sys.stderr.write(("\r\033[K" + text) if self.tty else (text + "\n"))
        sys.stderr.flush()

    def done(self, message: str) -> None:
        if self.enabled:
            sys.stderr.write(("\r\033[K" if self.tty else "") + f"spla: {message}\n")
            sys.stderr.flush()


# ------------------------------------------------------------------ download
def _host(url: str) -> str:
    return urllib.parse.urlsplit(url).netloc or url


def _open(url: str, offset: int, timeout: float):
    headers = {"User-Agent": USER_AGENT}
    if offset:
        headers["Range"] = f"bytes={offset}-"
    try:
        return urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=timeout)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and offset:
            return None   # the .part is not a prefix the server knows: start again
        raise FetchError(f"cannot download {url}: the server answered HTTP {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, (ConnectionResetError, BrokenPipeError)):
            raise _Interrupted(f"connection failed: {reason}") from None
        unreachable = (socket.gaierror, ConnectionRefusedError, TimeoutError, socket.timeout)
        if isinstance(reason, unreachable) or getattr(reason, "errno", None) in _UNREACHABLE_ERRNOS:
            raise NoNetworkError(f"cannot reach {_host(url)} ({reason}): no network connection?") from None
        raise FetchError(f"cannot download {url}: {reason}") from None
    except TimeoutError:
        raise NoNetworkError(f"cannot reach {_host(url)}: no answer in {timeout:g} s (no network connection?)") \
            from None
    except (ConnectionError, http.client.HTTPException) as exc:
        raise _Interrupted(f"connection failed: {exc}") from None


_CONTENT_RANGE = re.compile(r"bytes\s+(\d+)-(\d+)/(\d+|\*)")


def _download_once(url: str, part: Path, timeout: float, progress: _Progress) -> None:
    """One request: append to ``part`` from its current size; _Interrupted if it stops early."""
    offset = part.stat().st_size if part.exists() else 0
    response = _open(url, offset, timeout)
    if response is None:       # 416: discard and restart from byte 0
        part.unlink()
        offset = 0
        response = _open(url, 0, timeout)
    with response:
        status = getattr(response, "status", 200)
        total = None
        if offset and status == 206:
            match = _CONTENT_RANGE.match(response.headers.get("Content-Range", ""))
            if not match or int(match.group(1)) != offset:
                raise FetchError(f"cannot resume {url}: the server sent the wrong byte range "
                                 f"({response.headers.get('Content-Range')!r}); delete {part} and run again")
            total = None if match.group(3) == "*" else int(match.group(3))
        else:
            offset = 0     # a plain 200 answer: the server ignored the range, the body is the whole file
            length = response.headers.get("Content-Length")
            total = int(length) if length and length.isdigit() else None
        done = offset
        with open(part, "ab" if offset else "wb") as out:
            try:
                while True:
                    chunk = response.read(CHUNK_BYTES)
                    if not chunk:
                        break
                    out.write(chunk)
                    done += len(chunk)
                    progress.update(done, total, offset)
            except (http.client.IncompleteRead, ConnectionError, TimeoutError, OSError) as exc:
                raise _Interrupted(f"{type(exc).__name__}: {exc}") from None
    if total is not None and done != total:
        if done > total:
            part.unlink()
            raise FetchError(f"{url}: received {done} bytes but the server announced {total}; "
                             f"the partial file was deleted, run again")
        raise _Interrupted(f"the connection closed after {done} of {total} bytes")


def download(url: str, archive: Path, *, timeout: float = 60, retries: int = 3, progress: bool = True) -> Path:
    """Download ``url`` to ``archive`` through ``archive.part``, resuming and retrying.

    Returns ``archive``. Raises :class:`NoNetworkError` when the host cannot
    be reached and :class:`FetchError` when the transfer keeps failing (the
    ``.part`` is kept, so the next call resumes it).
    """
    part = archive.with_name(archive.name + ".part")
    meter = _Progress(archive.name, progress)
    failures = 0
    while True:
        before = part.stat().st_size if part.exists() else 0
        try:
            _download_once(url, part, timeout, meter)
            break
        except _Interrupted as exc:
            after = part.stat().st_size if part.exists() else 0
            failures = 0 if after > before else failures + 1   # only stalls count against the budget
            if failures > retries or retries == 0:
                raise FetchError(f"download of {url} stopped at {after / 1e6:.1f} MB ({exc.reason}); "
                                 f"run the same command again to resume from {part.name}") from None
            meter.done(f"connection lost at {after / 1e6:.1f} MB ({exc.reason}); resuming")
            retries -= 1
            time.sleep(min(2.0, 0.2 * (failures + 1)))
    os.replace(part, archive)
    meter.done(f"downloaded {archive.name} ({archive.stat().st_size / 1e6:.1f} MB)")
    return archive


# ------------------------------------------------------------------ archive
def _choose_member(tar: tarfile.TarFile, name: str, archive: Path) -> tarfile.TarInfo:
    candidates = [m for m in tar.getmembers() if m.isfile() and m.name.endswith(".mtx")]
    exact = [m for m in candidates if Path(m.name).name == f"{name}.mtx"]
    if exact:
        return exact[0]
    if len(candidates) == 1:
        return candidates[0]
    listed = ", ".join(m.name for m in candidates[:6]) or "none"
    raise FetchError(f"{archive}: no {name}.mtx in the archive (its .mtx files: {listed})")


def _read_header(stream, where: str):
    """Banner line, comment lines and size line as raw bytes, plus (field, symmetry, rows, cols, entries)."""
    head = [stream.readline()]
    banner = head[0].decode("ascii", "replace").split()
    if len(banner) < 5 or banner[0].lower() != "%%matrixmarket":
        raise FetchError(f"{where}: not a Matrix Market file (first line {head[0][:60]!r})")
    if banner[2].lower() != "coordinate":
        raise FetchError(f"{where}: a dense ({banner[2]}) Matrix Market file; the catalogue expects coordinate")
    while True:
        line = stream.readline()
        if not line:
            raise FetchError(f"{where}: the file ends before its size line")
        head.append(line)
        text = line.strip()
        if text and not text.startswith(b"%"):
            break
    words = text.split()
    if len(words) != 3 or not all(w.isdigit() for w in words):
        raise FetchError(f"{where}: bad size line {text[:60]!r} (expected: rows cols entries)")
    rows, cols, entries = (int(w) for w in words)
    return b"".join(head), (banner[3].lower(), banner[4].lower(), rows, cols, entries)


def _check_header(entry: Entry | None, header, where: str) -> None:
    if entry is None:
        return
    field, symmetry, rows, cols, entries = header
    lo, hi = entry.header_nnz_range()
    expected = f"{lo}" if lo == hi else f"{lo}..{hi}"
    if (rows, cols) != (entry.rows, entry.cols) or not lo <= entries <= hi:
        raise FetchError(f"{where}: the header says {rows} x {cols} with {entries} entries but the catalogue "
                         f"expects {entry.rows} x {entry.cols} with {expected} (nnz mismatch: wrong or changed file)")
    if symmetry != entry.symmetry:
        raise FetchError(f"{where}: the header says {symmetry} but the catalogue expects {entry.symmetry}")


def _copy_counting_lines(stream, out, head: bytes, progress: _Progress, total: int) -> int:
    """Copy the body after ``head``; return its number of entry lines (blank trailing lines ignored)."""
    out.write(head)
    newlines, tail, done, any_content = 0, b"", len(head), False
    while True:
        chunk = stream.read(CHUNK_BYTES)
        if not chunk:
            break
        out.write(chunk)
        newlines += chunk.count(b"\n")
        any_content = any_content or bool(chunk.strip())
        tail = (tail + chunk)[-256:]
        done += len(chunk)
        progress.update(done, total)
    if not any_content:
        return 0
    trailing_newlines = tail[len(tail.rstrip()):].count(b"\n")
    # the last line may lack its newline; blank lines after it are not entries
    return newlines - trailing_newlines + 1


def extract(archive: Path, name: str, dest: Path, entry: Entry | None = None, *, verify: bool = True,
            progress: bool = True) -> Path:
    """Unpack ``NAME.mtx`` from ``archive`` to ``dest`` atomically, checking it on the way."""
    from .cache import atomic_file

    meter = _Progress(f"{name}.mtx (unpacking)", progress)
    try:
        with tarfile.open(archive, "r:gz") as tar:
            member = _choose_member(tar, name, archive)
            free = shutil.disk_usage(dest.parent).free
            if member.size > free:
                raise FetchError(f"{name}.mtx needs {member.size / 1e9:.1f} GB but {dest.parent} has only "
                                 f"{free / 1e9:.1f} GB free")
            stream = tar.extractfile(member)
            where = f"{archive.name}:{member.name}"
            head, header = _read_header(stream, where)
            if verify:
                _check_header(entry, header, where)
            with atomic_file(dest) as out:
                lines = _copy_counting_lines(stream, out, head, meter, member.size)
                if lines != header[4]:
                    raise FetchError(f"{where}: {lines} entry lines but the header declares {header[4]} "
                                     f"(truncated or damaged archive)")
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
        archive.unlink(missing_ok=True)
        raise FetchError(f"{archive.name} is not a readable .tar.gz ({type(exc).__name__}: {exc}); "
                         f"it was deleted: run the command again to download it afresh") from None
    meter.done(f"wrote {dest} ({header[2]} x {header[3]}, {header[4]} entries)")
    return dest


# ------------------------------------------------------------------ entry point
def _name_from_url(url: str) -> str:
    base = Path(urllib.parse.urlsplit(url).path).name
    for suffix in ARCHIVE_SUFFIXES:
        if base.endswith(suffix):
            return base[: -len(suffix)]
    raise InputError(f"{url}: spla fetch downloads Matrix Market .tar.gz archives (the URL must end in .tar.gz)")


def resolve(name_or_url: str, catalog=None):
    """``(name, url, entry)`` for a catalogue NAME, GROUP/NAME, alias or URL (entry None for a foreign URL)."""
    catalog = default_catalog() if catalog is None else catalog
    if "://" in name_or_url:
        for entry in catalog:
            if entry.url == name_or_url:
                return entry.name, entry.url, entry
        return _name_from_url(name_or_url), name_or_url, None
    entry = catalog.get(name_or_url)
    return entry.name, entry.url, entry


def fetch(name_or_url: str, dest_dir="matrices", *, force: bool = False, keep_archive: bool = False,
          verify: bool = True, progress: bool = True, timeout: float = 60, retries: int = 3,
          catalog=None) -> Path:
    """Download a matrix into ``dest_dir/NAME.mtx`` and return that path.

    Parameters
    ----------
    name_or_url : str
        A catalogue ``NAME``, ``GROUP/NAME`` or alias, or the URL of a
        Matrix Market ``.tar.gz``.
    dest_dir : path
        Folder for the archive and the ``.mtx`` (created if missing).
    force : bool
        Fetch again even if ``NAME.mtx`` is already there.
    keep_archive : bool
        Keep ``NAME.tar.gz`` after unpacking (deleted by default).
    verify : bool
        Check the header against the catalogue (rows, cols, entry count,
        symmetry). The entry-line count is always checked.
    progress : bool
        Progress lines on stderr.
    timeout, retries :
        Seconds without data before a connection counts as lost; how many
        stalled reconnects (each resuming) before giving up.
    catalog : Catalog, optional
        Defaults to the shipped catalogue.

    Raises
    ------
    InputError
        Unknown name or unusable URL.
    NoNetworkError, FetchError
        One line naming the cause and the next step.

    See Also
    --------
    spla.load : loads ``NAME`` from ``matrices/NAME.mtx`` once fetched.
    """
    name, url, entry = resolve(name_or_url, catalog)
    dest_dir = Path(dest_dir)
    dest_dir.mkdir(parents=True, exist_ok=True)
    dest = dest_dir / f"{name}.mtx"
    meter = _Progress(name, progress)
    if dest.is_file() and not force:
        meter.done(f"{dest} is already present (use --force to fetch it again)")
        return dest
    if entry is not None and entry.generator:
        return _write_generated(entry, dest, meter)
    archive = dest_dir / f"{name}.tar.gz"
    if not archive.is_file():
        try:
            download(url, archive, timeout=timeout, retries=retries, progress=progress)
        except NoNetworkError as exc:
            stand_in = f" or use its stand-in `{entry.stand_in}`" if entry is not None and entry.stand_in else ""
            raise NoNetworkError(f"cannot fetch {name}: {exc}; copy {archive.name} into {dest_dir}/ and run "
                                 f"again{stand_in}") from None
    else:
        meter.done(f"using the archive already in {archive}")
    extract(archive, name, dest, entry, verify=verify, progress=progress)
    if not keep_archive:
        archive.unlink(missing_ok=True)
    return dest


def _write_generated(entry: Entry, dest: Path, meter: _Progress) -> Path:
    from . import generators
    from .mmio import write_mtx

    A = generators.from_spec(str(entry.generator))
    write_mtx(dest, A, comment=f" {entry.full_name}: generated by spla from {entry.generator}")
    meter.done(f"wrote {dest} from {entry.generator}")
    return dest
