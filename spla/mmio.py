"""Matrix Market (``.mtx``, ``.mtx.gz``) reading and writing.

Reading is two-tier, so that it is fast on good files and precise on bad ones:

1. spla parses the header itself and checks the declared sizes against the
   bytes the file can hold *before* anything is allocated (a 10-line file that
   declares 10**12 entries is an error, not a 16 TB allocation).
2. One cheap pass over the body counts whitespace-separated tokens and the
   characters used; then SciPy's multi-threaded C++ reader
   (``scipy.io.mmread``, fast_matrix_market, SciPy >= 1.12) parses it. On a
   5M-entry file the pass costs about a third of the parse.
3. Whenever the fast reader fails or the pass looks wrong (wrong token count,
   stray characters, values in a pattern file, a non-zero skew diagonal...),
   a line-by-line scanner re-reads the file and raises
   :class:`spla.MatrixFormatError` naming the file and the offending line. If
   the scanner finds nothing wrong (for example comment lines between
   entries, which the C++ reader refuses), its own parse is used.

Semantics follow SciPy: symmetric and skew-symmetric storage is expanded
(the diagonal is not doubled; a skew-symmetric diagonal must be zero),
duplicate entries are summed by the CSR conversion and counted, explicit
zeros are kept in coordinate files, NaN and Inf values are loaded as they are.
Complex and Hermitian matrices are refused.
"""

from __future__ import annotations

import gzip
import io
import mmap
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .errors import MatrixFormatError

FORMATS = ("coordinate", "array")
FIELDS = ("real", "double", "integer", "pattern")
SYMMETRIES = ("general", "symmetric", "skew-symmetric")
COMPLEX_FIELDS = ("complex",)
COMPLEX_SYMMETRIES = ("hermitian",)

# deflate cannot compress better than about 1032:1, so this bounds the text
# a .gz file can expand to without decompressing it.
DEFLATE_MAX_RATIO = 1032
CHUNK_BYTES = 1 << 24
_WHITESPACE = b" \t\r\n\v\f"
_DIGITS = b"0123456789"
_NUMBER_CHARS = _WHITESPACE + _DIGITS + b"+-.eE"
_NONFINITE_LETTERS = set(b"nNaAiIfFtTyY")  # nan, inf, infinity in any case


@dataclass
class MtxHeader:
    """The banner and size line of a Matrix Market file."""

    format: str
    field: str
    symmetry: str
    n_rows: int
    n_cols: int
    declared_nnz: int | None      # the size line's third number (coordinate only)
    size_line: int                # 1-based line number of the size line
    body_offset: int              # byte offset of the first body line (decompressed)
    comments: list = field(default_factory=list)

    @property
    def stored_entries(self) -> int:
        """How many entries the body must hold."""
        if self.format == "coordinate":
            return self.declared_nnz
        n = self.n_rows
        if self.symmetry == "symmetric":
            return n * (n + 1) // 2
        if self.symmetry == "skew-symmetric":
            return n * (n - 1) // 2
        return self.n_rows * self.n_cols

    @property
    def fields_per_entry(self) -> int:
        if self.format == "array":
            return 1
        return 2 if self.field == "pattern" else 3


def _open_binary(path: Path):
    if path.name.endswith(".gz"):
        return gzip.open(path, "rb")
    return open(path, "rb")


def read_header(stream, path) -> MtxHeader:
    """Parse the banner, comments and size line from a binary stream at offset 0."""
    offset = 0
    first = stream.readline()
    offset += len(first)
    banner = first.decode("ascii", "replace").split()
    if not banner or banner[0].lower() != "%%matrixmarket":
        raise MatrixFormatError("not a Matrix Market file: the first line must start with "
                                "'%%MatrixMarket matrix coordinate|array <field> <symmetry>'", path=path, line=1)
    if len(banner) != 5:
        raise MatrixFormatError(f"the banner needs 4 words after %%MatrixMarket, found {len(banner) - 1}: "
                                f"{first.decode('ascii', 'replace').strip()!r}", path=path, line=1)
    obj, fmt, fld, sym = (word.lower() for word in banner[1:])
    if obj != "matrix":
        raise MatrixFormatError(f"only 'matrix' objects are supported, not {obj!r}", path=path, line=1)
    if fld in COMPLEX_FIELDS or sym in COMPLEX_SYMMETRIES:
        raise MatrixFormatError("complex matrices are not supported", path=path, line=1)
    if fmt not in FORMATS:
        raise MatrixFormatError(f"unknown format {fmt!r} (expected coordinate or array)", path=path, line=1)
    if fld not in FIELDS:
        raise MatrixFormatError(f"unknown field {fld!r} (expected real, integer or pattern)", path=path, line=1)
    if sym not in SYMMETRIES:
        raise MatrixFormatError(f"unknown symmetry {sym!r} (expected general, symmetric or skew-symmetric)",
                                path=path, line=1)
    if fmt == "array" and fld == "pattern":
        raise MatrixFormatError("an array file cannot have the pattern field", path=path, line=1)
    if sym == "skew-symmetric" and fld == "pattern":
        raise MatrixFormatError("a pattern matrix cannot be skew-symmetric", path=path, line=1)

    line_no, comments = 1, []
    while True:
        raw = stream.readline()
        if not raw:
            raise MatrixFormatError("the file ends before the size line", path=path, line=line_no + 1)
        line_no += 1
        offset += len(raw)
        text = raw.decode("ascii", "replace").strip()
        if text.startswith("%"):
            comments.append(text[1:].strip())
            continue
        if text:
            break
    words = text.split()
    expected = 3 if fmt == "coordinate" else 2
    what = "rows cols entries" if fmt == "coordinate" else "rows cols"
    if len(words) != expected:
        raise MatrixFormatError(f"the size line must be '{what}', found {text!r}", path=path, line=line_no)
    try:
        sizes = [int(w) for w in words]
        if any("_" in w for w in words):
            raise ValueError
    except ValueError:
        raise MatrixFormatError(f"the size line must hold integers ('{what}'), found {text!r}",
                                path=path, line=line_no) from None
    if min(sizes) < 0:
        raise MatrixFormatError(f"negative size in the size line {text!r}", path=path, line=line_no)
    if sym != "general" and sizes[0] != sizes[1]:
        raise MatrixFormatError(f"a {sym} matrix must be square, the size line says {sizes[0]}x{sizes[1]}",
                                path=path, line=line_no)
    return MtxHeader(fmt, "real" if fld == "double" else fld, sym, sizes[0], sizes[1],
                     sizes[2] if fmt == "coordinate" else None, line_no, offset, comments)


# Below this many entries the line scanner may allocate for the declared count
# and then name the exact line where the body falls short.
SCAN_ANYWAY_ENTRIES = 1 << 22


def _check_declared_sizes(header: MtxHeader, path: Path) -> bool:
    """Refuse sizes the file cannot hold, before anything is allocated.

    Returns False when the body is too short for the declared entries but
    small enough that the line scanner should name the bad line instead.
    """
    on_disk = path.stat().st_size
    if path.name.endswith(".gz"):
        available, how = on_disk * DEFLATE_MAX_RATIO, f"a {on_disk}-byte .gz file expands to at most"
    else:
        available, how = on_disk - header.body_offset, "the file has only"
    entries = header.stored_entries
    # each field is at least one character and one separator (the last newline may be missing)
    needed = entries * 2 * header.fields_per_entry - 1
    fits = not entries or needed <= available
    if not fits and entries > SCAN_ANYWAY_ENTRIES:
        raise MatrixFormatError(
            f"the size line declares {entries} entries, which need at least {needed} bytes, but {how} "
            f"{available} bytes after it (truncated file or wrong size line)", path=path, line=header.size_line)
    # the CSR row pointer is allocated whatever the nnz; refuse what cannot fit in memory
    row_pointer_bytes = 8 * (header.n_rows + 1)
    memory = _physical_memory()
    if memory and row_pointer_bytes > memory:
        raise MatrixFormatError(
            f"the size line declares {header.n_rows} rows: the row pointer alone would need "
            f"{row_pointer_bytes / 2**30:.1f} GiB, more than this machine's {memory / 2**30:.1f} GiB",
            path=path, line=header.size_line)
    return fits


def _physical_memory() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


# ------------------------------------------------------------------ fast path
class _BodyCheck:
    """Token count and character classes of the body, accumulated chunk by chunk."""

    def __init__(self, field_name: str):
        self.tokens = 0
        self.previous_was_space = True
        self.stray = set()
        self.allowed = _NUMBER_CHARS if field_name == "real" else _WHITESPACE + _DIGITS + b"+-"

    def feed(self, chunk) -> None:
        if not len(chunk):
            return
        is_space = np.frombuffer(chunk, np.uint8) <= 32
        starts = np.count_nonzero(is_space[:-1] & ~is_space[1:])
        starts += int(self.previous_was_space and not is_space[0])
        self.tokens += int(starts)
        self.previous_was_space = bool(is_space[-1])
        rest = bytes(chunk).translate(None, self.allowed)
        if rest:
            self.stray.update(rest)

    def clean(self, header: MtxHeader, field_name: str) -> bool:
        if self.tokens != header.stored_entries * header.fields_per_entry:
            return False
        if field_name == "real":
            return self.stray <= _NONFINITE_LETTERS
        return not self.stray


def _body_chunks_plain(path: Path, offset: int, progress):
    size = path.stat().st_size
    if size <= offset:
        return
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        for start in range(offset, size, CHUNK_BYTES):
            yield mapped[start:start + CHUNK_BYTES]  # a bytes copy: no view outlives the map
            if progress:
                progress("checking", min(1.0, (start + CHUNK_BYTES) / size))


def _read_fast(path: Path, header: MtxHeader, progress):
    """Parse with SciPy's C++ reader; None when the file needs the line scanner."""
    try:
        from scipy.io import _fast_matrix_market  # noqa: F401  (SciPy >= 1.12)
    except ImportError:
        return None
    import scipy.io

    check = _BodyCheck(header.field)
    if path.name.endswith(".gz"):
        # decompress once: the same bytes feed the check and the parser
        parts = []
        compressed_size = max(1, path.stat().st_size)
        with open(path, "rb") as raw, gzip.GzipFile(fileobj=raw, mode="rb") as stream:
            while True:
                chunk = stream.read(CHUNK_BYTES)
                if not chunk:
                    break
                parts.append(chunk)
                if progress:
                    progress("decompressing", min(1.0, raw.tell() / compressed_size))
        text = b"".join(parts)
        del parts
        check.feed(memoryview(text)[header.body_offset:])
        source = io.BytesIO(text)
    else:
        for chunk in _body_chunks_plain(path, header.body_offset, progress):
            check.feed(chunk)
        source = str(path)
    if not check.clean(header, header.field):
        return None
    if progress:
        progress("parsing", None)
    try:
        parsed = scipy.io.mmread(source)
    except (ValueError, OverflowError, MemoryError, RuntimeError):
        return None
    if header.format == "array":
        return _array_to_coo(np.asarray(parsed))
    rows, cols, values = parsed.row, parsed.col, parsed.data
    if header.symmetry == "skew-symmetric":
        diagonal = rows == cols
        if diagonal.any() and np.any(values[diagonal] != 0):
            return None
    return rows, cols, values


def _array_to_coo(dense: np.ndarray):
    rows, cols = np.nonzero(dense)  # NaN counts as non-zero, explicit zeros are dropped
    return rows, cols, dense[rows, cols]


# ------------------------------------------------------------------ slow path
def _scan(path: Path, header: MtxHeader, progress):
    """Line-by-line parse that names the first bad line; returns COO triplets."""
    if progress:
        progress("scanning line by line", None)
    entries = header.stored_entries
    width = header.fields_per_entry
    is_array = header.format == "array"
    is_int = header.field in ("integer", "pattern")
    values = np.empty(entries, dtype=np.float64)
    if not is_array:
        rows = np.empty(entries, dtype=np.int64)
        cols = np.empty(entries, dtype=np.int64)
    names = ("value",) if is_array else ("row", "column", "value")[:width]
    count = 0
    line_no = header.size_line
    with _open_binary(path) as stream:
        stream.seek(header.body_offset)
        for raw in stream:
            line_no += 1
            text = raw.decode("ascii", "replace").strip()
            if not text or text.startswith("%"):
                continue
            words = text.split()
            if len(words) != width:
                layout = " ".join(names)
                raise MatrixFormatError(f"expected {width} field{'s' * (width > 1)} ({layout}), "
                                        f"found {len(words)}: {text[:80]!r}", path=path, line=line_no)
            if count == entries:
                raise MatrixFormatError(f"more entries than the {entries} declared on line {header.size_line}",
                                        path=path, line=line_no)
            if not is_array:
                for k, bound in ((0, header.n_rows), (1, header.n_cols)):
                    index = _parse_int(words[k], names[k] + " index", path, line_no)
                    if not 1 <= index <= bound:
                        raise MatrixFormatError(f"{names[k]} index {index} is out of range 1..{bound} "
                                                f"(indices are 1-based)", path=path, line=line_no)
                    (rows if k == 0 else cols)[count] = index - 1
            if header.field != "pattern":
                word = words[-1]
                if is_int:
                    values[count] = _parse_int(word, "integer value", path, line_no)
                else:
                    values[count] = _parse_float(word, path, line_no)
            if header.symmetry == "skew-symmetric" and not is_array and rows[count] == cols[count] \
                    and values[count] != 0:
                raise MatrixFormatError(f"a skew-symmetric matrix must have a zero diagonal, found {word}",
                                        path=path, line=line_no)
            count += 1
    if count < entries:
        raise MatrixFormatError(f"truncated: line {header.size_line} declares {entries} entries but the file "
                                f"ends after {count}", path=path, line=line_no + 1)
    if header.field == "pattern":
        values[:] = 1.0
    if is_array:
        return _array_body_to_coo(values, header)
    return _expand_symmetry(rows, cols, values, header.symmetry)


def _parse_int(word: str, what: str, path, line_no: int) -> int:
    try:
        if "_" in word:
            raise ValueError
        return int(word)
    except ValueError:
        raise MatrixFormatError(f"{what} {word!r} is not an integer", path=path, line=line_no) from None


def _parse_float(word: str, path, line_no: int) -> float:
    try:
        if "_" in word:
            raise ValueError
        return float(word)
    except ValueError:
        raise MatrixFormatError(f"value {word!r} is not a number", path=path, line=line_no) from None


def _array_body_to_coo(values: np.ndarray, header: MtxHeader):
    n_rows, n_cols = header.n_rows, header.n_cols
    if header.symmetry == "general":
        dense = values.reshape((n_cols, n_rows)).T  # array files are column-major
        return _array_to_coo(dense)
    # the lower triangle, column by column (strictly lower for skew-symmetric)
    offset = 0 if header.symmetry == "symmetric" else 1
    cols, rows = np.tril_indices(n_rows, -offset)
    order = np.lexsort((rows, cols))
    rows, cols = rows[order], cols[order]
    dense = np.zeros((n_rows, n_cols))
    dense[rows, cols] = values
    sign = -1.0 if header.symmetry == "skew-symmetric" else 1.0
    off = rows != cols
    dense[cols[off], rows[off]] = sign * values[off]
    return _array_to_coo(dense)


def _expand_symmetry(rows, cols, values, symmetry: str):
    if symmetry == "general":
        return rows, cols, values
    off = rows != cols
    mirror = values[off] if symmetry == "symmetric" else -values[off]
    return (np.concatenate((rows, cols[off])), np.concatenate((cols, rows[off])),
            np.concatenate((values, mirror)))


# ------------------------------------------------------------------ public API
def read_mtx(path, *, progress=None):
    """Read a Matrix Market file into a :class:`spla.CSRMatrix`.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.mtx`` or ``.mtx.gz`` file.
    progress : callable, optional
        Called as ``progress(stage, fraction)`` (fraction in [0, 1] or None).

    Returns
    -------
    A : CSRMatrix
        float64 values (integer and pattern files too), duplicates summed.
    info : dict
        ``format``, ``field``, ``symmetry``, ``entries_in_file``,
        ``duplicates_summed``, ``parser`` and the header ``comments``.

    Raises
    ------
    MatrixFormatError
        Naming the file and line of the first problem found.

    See Also
    --------
    scipy.io.mmread
    """
    import scipy.sparse as sp

    from .csr import CSRMatrix

    path = Path(path)
    try:
        with _open_binary(path) as stream:
            header = read_header(stream, path)
    except (EOFError, gzip.BadGzipFile, OSError) as exc:
        if isinstance(exc, (FileNotFoundError, IsADirectoryError, PermissionError)):
            raise
        raise MatrixFormatError(f"cannot read the file: {exc}", path=path) from None
    body_fits = _check_declared_sizes(header, path)
    try:
        triplets = _read_fast(path, header, progress) if body_fits else None
        parser = "scipy.io.mmread (fast_matrix_market)"
        if triplets is None:
            triplets = _scan(path, header, progress)
            parser = "spla line scanner"
    except (EOFError, gzip.BadGzipFile) as exc:
        raise MatrixFormatError(f"corrupt .gz file: {exc}", path=path) from None
    rows, cols, values = triplets
    if progress:
        progress("building CSR", None)
    coo = sp.coo_matrix((np.asarray(values, dtype=np.float64), (rows, cols)),
                        shape=(header.n_rows, header.n_cols))
    csr = coo.tocsr()  # sums duplicates, keeps explicit zeros
    info = {
        "format": f"matrix market {header.format}",
        "field": header.field,
        "symmetry": header.symmetry,
        "entries_in_file": header.stored_entries,
        "duplicates_summed": int(coo.nnz - csr.nnz),
        "parser": parser,
        "comments": header.comments[:20],
    }
    return CSRMatrix.from_scipy(csr), info


def write_mtx(path, A, *, comment: str | None = None) -> Path:
    """Write a matrix as Matrix Market ``coordinate real general`` (``.gz`` if the name says so).

    Values are written with round-trip (repr) precision. The file appears
    atomically: it is written to a temporary file in the same folder and
    renamed, so an interrupted write leaves nothing behind.

    Parameters
    ----------
    path : str or os.PathLike
    A : CSRMatrix, scipy.sparse matrix or dense array
    comment : str, optional
        Written as ``%`` lines after the banner.

    See Also
    --------
    scipy.io.mmwrite
    """
    import scipy.sparse as sp

    from .cache import atomic_file
    from .csr import as_csr

    path = Path(path)
    coo = as_csr(A).to_scipy().tocoo()
    coo = sp.coo_matrix((coo.data.astype(np.float64), (coo.row, coo.col)), shape=coo.shape)
    with atomic_file(path) as raw:
        if path.name.endswith(".gz"):
            with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6) as stream:
                _write_coordinate(stream, coo, comment)
        else:
            _write_coordinate(raw, coo, comment)
    return path


def _write_coordinate(stream, coo, comment) -> None:
    try:
        import scipy.io
        from scipy.io import _fast_matrix_market  # noqa: F401
    except ImportError:
        _write_coordinate_numpy(stream, coo, comment)
        return
    scipy.io.mmwrite(stream, coo, comment=comment or "", field="real", symmetry="general")


def _write_coordinate_numpy(stream, coo, comment) -> None:
    # older SciPy: its Python writer is slow, NumPy's savetxt is enough
    head = "%%MatrixMarket matrix coordinate real general\n"
    for line in (comment or "").splitlines():
        head += f"%{line}\n"
    head += f"{coo.shape[0]} {coo.shape[1]} {coo.nnz}\n"
    stream.write(head.encode())
    body = np.empty(coo.nnz, dtype=[("r", np.int64), ("c", np.int64), ("v", np.float64)])
    body["r"], body["c"], body["v"] = coo.row + 1, coo.col + 1, coo.data
    np.savetxt(stream, body, fmt=("%d", "%d", "%.17g"))

