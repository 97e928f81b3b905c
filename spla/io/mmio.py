"""Matrix Market (``.mtx``, ``.mtx.gz``) reading and writing.

Reading is two-tier, so that it is fast on good files and precise on bad ones:

1. spla parses the header itself and checks the declared sizes against the
   bytes the file can hold *before* anything is allocated (a 10-line file that
   declares 10**12 entries is an error, not a 16 TB allocation).
2. One pass over the body checks what SciPy's multi-threaded C++ reader
   (``scipy.io.mmread``, fast_matrix_market, SciPy >= 1.12) gets wrong
   silently or dies on: the token count, the characters used, every line's
   width, integer indices and the syntax of every number (that reader takes
   ``1..2`` as 1 and the entry ``1 2.7 13`` as (1, 2, 0.7); it segfaults on
   a file ending in a space without a newline and divides by zero on an
   array file with no rows). That reader never sees a byte the check has
   not passed. A plain file is checked, then parsed from its path; a
   ``.gz`` file's text is checked as the reader pulls it, in whole lines
   (:class:`_CheckedText`), so decompressing, checking and parsing overlap
   and the text is never held whole, as in SciPy's own ``.gz`` reading. The
   check is one pass of C built on first use (:mod:`spla.io.native`), a
   fraction of the parse; where no C compiler is available, whole-array
   NumPy work on the positions of signs, dots and exponents gives the same
   verdicts at several parses' cost.
3. Whenever the fast reader fails or the pass looks wrong (wrong token count,
   stray characters such as NaN/Inf, values in a pattern file, a non-zero skew diagonal...),
   a line-by-line scanner re-reads the file and raises
   :class:`spla.MatrixFormatError` naming the file and the offending line. If
   the scanner finds nothing wrong (for example comment lines between
   entries, which the C++ reader refuses), its own parse is used.

Semantics follow SciPy: symmetric and skew-symmetric storage is expanded
(the diagonal is not doubled; a skew-symmetric diagonal must be zero),
duplicate entries are summed by the CSR conversion and counted, explicit
zeros are kept in coordinate files, NaN and Inf values are loaded as they are.
Integer files keep their values exactly: they are read as int64 (a value
beyond int64 is an error, as in SciPy), and where the matrix type holds only
floating values a value beyond 2**53 is an error rather than a rounded
number. Complex files load as complex128; Hermitian storage is expanded with
the conjugate, and a ``real`` (or ``integer``/``pattern``) Hermitian file is
symmetric. A UTF-8 byte-order mark before the banner is skipped. Tokens quoted
in error messages are cut to :data:`SHOW_CHARS` characters.
"""

from __future__ import annotations

import functools
import gzip
import io
import os
import zlib
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from pathlib import Path
from typing import NoReturn

import numpy as np

from ..errors import MatrixFormatError
from . import native
from .memory import check_host_memory

INT64_MAX = 2**63 - 1
FORMATS = ("coordinate", "array")
FIELDS = ("real", "double", "integer", "pattern", "complex")
SYMMETRIES = ("general", "symmetric", "skew-symmetric", "hermitian")
BOM = b"\xef\xbb\xbf"
# longest token or line quoted in an error message
SHOW_CHARS = 60
FLOAT64_EXACT_INT = 2**53


def show(text) -> str:
    """``text`` quoted for a one-line error message, cut to SHOW_CHARS characters."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text[:4 * SHOW_CHARS]).decode("utf-8", "replace")
    if len(text) > SHOW_CHARS:
        return repr(text[:SHOW_CHARS]) + f"... ({len(text)} characters)"
    return repr(text)

# deflate cannot compress better than about 1032:1, so this bounds the text
# a .gz file can expand to without decompressing it.
DEFLATE_MAX_RATIO = 1032
CHUNK_BYTES = 1 << 22
# a line longer than this (no entry comes close) goes to the line scanner
LONGEST_LINE = 1 << 20
_WHITESPACE = b" \t\r\n\v\f"
_DIGITS = b"0123456789"
_NUMBER_CHARS = _WHITESPACE + _DIGITS + b"+-.eE"


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
    comments: list = dataclass_field(default_factory=list)
    note: str = ""                # what the banner needed that SciPy's reader does not do

    @property
    def stored_entries(self) -> int:
        """How many entries the body must hold."""
        if self.format == "coordinate":
            assert self.declared_nnz is not None, "a coordinate header declares nnz"
            return self.declared_nnz
        n = self.n_rows
        if self.symmetry in ("symmetric", "hermitian"):
            return n * (n + 1) // 2
        if self.symmetry == "skew-symmetric":
            return n * (n - 1) // 2
        return self.n_rows * self.n_cols

    @property
    def fields_per_entry(self) -> int:
        per_value = 2 if self.field == "complex" else 1
        if self.format == "array":
            return per_value
        return 2 if self.field == "pattern" else 2 + per_value


def _open_binary(path: Path):
    if path.name.endswith(".gz"):
        return gzip.open(path, "rb")
    return open(path, "rb")


def read_header(stream, path) -> MtxHeader:
    """Parse the banner, comments and size line from a binary stream at offset 0."""
    offset = 0
    first = stream.readline(1 << 16)
    offset += len(first)
    note = ""
    if first.startswith(BOM):  # a UTF-8 byte-order mark some editors add
        first, note = first[len(BOM):], "byte-order mark skipped"
    banner = first.decode("ascii", "replace").split()
    if not banner or banner[0].lower() != "%%matrixmarket":
        raise MatrixFormatError("not a Matrix Market file: the first line must start with "
                                "'%%MatrixMarket matrix coordinate|array <field> <symmetry>'", path=path, line=1)
    if len(banner) != 5:
        raise MatrixFormatError(f"the banner needs 4 words after %%MatrixMarket, found {len(banner) - 1}: "
                                f"{show(first.decode('ascii', 'replace').strip())}", path=path, line=1)
    obj, fmt, fld, sym = (word.lower() for word in banner[1:])
    if obj != "matrix":
        raise MatrixFormatError(f"only 'matrix' objects are supported, not {show(obj)}", path=path, line=1)
    if fmt not in FORMATS:
        raise MatrixFormatError(f"unknown format {show(fmt)} (expected coordinate or array)", path=path, line=1)
    if fld not in FIELDS:
        raise MatrixFormatError(f"unknown field {show(fld)} (expected real, integer, complex or pattern)",
                                path=path, line=1)
    if sym not in SYMMETRIES:
        raise MatrixFormatError(f"unknown symmetry {show(sym)} (expected general, symmetric, skew-symmetric "
                                f"or hermitian)", path=path, line=1)
    if fmt == "array" and fld == "pattern":
        raise MatrixFormatError("an array file cannot have the pattern field", path=path, line=1)
    if sym == "skew-symmetric" and fld == "pattern":
        raise MatrixFormatError("a pattern matrix cannot be skew-symmetric", path=path, line=1)

    if sym == "hermitian" and fld != "complex":
        sym, note = "symmetric", f"{fld} hermitian read as symmetric"  # a real value is its own conjugate
    line_no, comments = 1, []
    while True:
        raw = stream.readline(1 << 20)
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
        raise MatrixFormatError(f"the size line must be '{what}', found {show(text)}", path=path, line=line_no)
    try:
        sizes = [int(w) for w in words]
        if any("_" in w for w in words):
            raise ValueError
    except ValueError:
        raise MatrixFormatError(f"the size line must hold integers ('{what}'), found {show(text)}",
                                path=path, line=line_no) from None
    if min(sizes) < 0:
        raise MatrixFormatError(f"negative size in the size line {show(text)}", path=path, line=line_no)
    if max(sizes) > INT64_MAX:
        raise MatrixFormatError(f"a size in the size line {show(text)} exceeds 2**63 - 1 (no index type holds it)",
                                path=path, line=line_no)
    if sym != "general" and sizes[0] != sizes[1]:
        raise MatrixFormatError(f"a {sym} matrix must be square, the size line says {sizes[0]}x{sizes[1]}",
                                path=path, line=line_no)
    return MtxHeader(fmt, "real" if fld == "double" else fld, sym, sizes[0], sizes[1],
                     sizes[2] if fmt == "coordinate" else None, line_no, offset, comments, note)


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
    check_host_memory(memory_needed(header),
                      f"{header.n_rows} x {header.n_cols} matrix with {entries} stored entries that "
                      f"{path.name}:{header.size_line} declares")
    return fits


def memory_needed(header: MtxHeader) -> int:
    """Peak bytes :func:`read_mtx` needs for the matrix the header declares (an upper estimate).

    The parsed triplets (int64 indices) and the CSR arrays are alive together
    while the CSR is built; Hermitian and (skew-)symmetric storage doubles the
    entries; an array file is first a dense array. The text itself is read in
    chunks (a ``.gz`` file's too), never held whole.
    """
    from ..csr import index_dtype_for

    value = 16 if header.field == "complex" else 8
    entries = header.stored_entries
    if header.symmetry != "general":
        entries *= 2
    if header.format == "array":
        entries = header.n_rows * header.n_cols
    index = index_dtype_for(entries, (header.n_rows, header.n_cols)).itemsize
    needed = entries * (16 + value) + entries * (index + value) + index * (header.n_rows + 1)
    if header.format == "array":
        needed += entries * value
    return needed


# ------------------------------------------------------------------ fast path
_CHECK_WORKERS = max(1, min(4, os.cpu_count() or 1))


@functools.cache
def _checker_pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(_CHECK_WORKERS, thread_name_prefix="spla-mtx-check")


class _BodyCheck:
    """Whether SciPy's C++ reader will read the body right, checked chunk by chunk.

    SciPy's reader is lenient: it reads ``1..2`` as 1, ``1e+`` as 1, ``nana``
    as NaN, ``infinit`` as Inf and the entry ``1 2.7 13`` as (1, 2, 0.7),
    without a word. So before the body goes to it, every line must hold 0 or
    ``width`` tokens, indices must be unsigned integers and every value must
    match ``[+-]? (D+ .? D* | . D+) ([eE] [+-]? D+)?`` (``[+-]? D+`` in integer
    files). The check is one pass of C (``mtx_check.c``, built on first use
    by :mod:`spla.io.native`, about 1 ns a byte) or, where no C compiler is
    available, the same verdicts from whole-array NumPy operations on the
    positions of the few non-digit characters (:func:`_body_well_formed`,
    about 17 ns a byte). A body with any other character (NaN, Inf, junk) or
    any doubt goes to the line scanner, which parses each token with Python's
    ``int``/``float``. Once one chunk fails, the rest is not looked at.
    """

    # Chunks are checked on a few threads (ctypes calls and NumPy's whole-array
    # operations release the GIL); at most this many chunks wait at a time.
    max_pending = 2 * _CHECK_WORKERS

    def __init__(self, header: MtxHeader):
        self.pending: deque = deque()
        self.expected_tokens = header.stored_entries * header.fields_per_entry
        self.width = header.fields_per_entry
        # leading fields that are indices
        self.index_fields = 0 if header.format == "array" else 2
        self.real = header.field in ("real", "complex")
        self.allowed = _NUMBER_CHARS if self.real else _WHITESPACE + _DIGITS + b"+-"
        self.compiled = native.mtx_checker()
        self.tokens = 0
        self.failed = False
        self.last_byte: int | None = None
        self.carry = b""  # the unfinished last line of the previous chunk

    def lines(self, chunk) -> list:
        """The whole lines the next ``chunk`` of the body completes, in order (the carried line first).

        Keeps the unfinished last line for the next chunk; returns nothing once the check has failed.
        """
        if self.failed or not len(chunk):
            return []
        data = bytes(chunk)  # plain files' chunks are bytes already (no copy)
        self.last_byte = data[-1]
        if self.compiled is None and data.translate(None, self.allowed):  # the C check refuses stray bytes itself
            self.failed = True
            return []
        pieces: list = []
        first = 0
        if self.carry:  # finish the line the previous chunk cut
            end = data.find(b"\n")
            if end < 0:
                self.carry += data
                self.failed = len(self.carry) > LONGEST_LINE  # (carry += chunk would grow quadratically)
                return pieces
            pieces.append(self.carry + data[:end + 1])
            first = end + 1
        cut = data.rfind(b"\n") + 1
        if cut > first:
            pieces.append(memoryview(data)[first:cut])
        self.carry = data[max(cut, first):]
        self.failed = len(self.carry) > LONGEST_LINE
        return pieces

    def feed(self, chunk) -> None:
        """Check the lines ``chunk`` completes on the checker threads; :meth:`clean` gives the verdict."""
        for piece in self.lines(chunk):
            self._check(piece)

    def tokens_in(self, lines) -> int:
        """Check whole lines now, on this thread: their tokens, or -1."""
        if self.compiled is None:
            return _body_well_formed(lines, self.width, self.index_fields, self.real)
        return native.check_lines(self.compiled, lines, self.width, self.index_fields, self.real)

    def ending(self):
        """The carried last line as the check takes it (b"" if blank), or None when it must go to the scanner."""
        if self.last_byte is not None and self.last_byte <= 32 and self.last_byte != ord("\n"):
            # SciPy 1.17's reader segfaults on a file that ends in a space, tab or
            # CR after its last value with no newline (the process dies)
            return None
        return self.carry.rstrip() + b"\n" if self.carry.strip() else b""

    def _check(self, lines) -> None:
        if self.failed:
            return
        self.pending.append(_checker_pool().submit(self.tokens_in, lines))
        while len(self.pending) > self.max_pending:
            self._collect()

    def _collect(self) -> None:
        tokens = self.pending.popleft().result()
        if tokens < 0:
            self.failed = True
        elif not self.failed:
            self.tokens += tokens

    def clean(self) -> bool:
        """Whether the whole body passed (after the last :meth:`feed`)."""
        ending = self.ending()
        if ending is None:
            return False
        self._check(ending)
        while self.pending:
            self._collect()
        return not self.failed and self.tokens == self.expected_tokens


class _Refused(Exception):
    """Raised inside SciPy's reader by :class:`_CheckedText`: the body failed the check (or would not decompress)."""


class _CheckedText(io.RawIOBase):
    """A ``.gz`` file's text for SciPy's reader, handed on only in whole lines that passed the body check.

    Decompressing, checking and parsing overlap as in SciPy's own ``.gz``
    reading (its reader thread pulls the text while its workers parse), and
    the text is never held whole. The reader never sees a byte the check has
    not passed: a chunk that fails, a decompression error, a file whose
    ending would crash the reader or a wrong token count raises
    :class:`_Refused` from :meth:`readinto`, which ends the parse. Wrap it in
    an ``io.BufferedReader`` (the reader asks for 1 KB at a time).
    """

    def __init__(self, path: Path, header: MtxHeader, check: _BodyCheck, progress):
        super().__init__()
        self.compressed = open(path, "rb")
        self.text = gzip.GzipFile(fileobj=self.compressed, mode="rb")
        self.compressed_size = max(1, path.stat().st_size)
        self.head = header.body_offset  # header bytes (spla has parsed them) go on unchecked
        self.check = check
        self.progress = progress
        self.ready: deque = deque()  # checked text not yet handed on
        self.finished = False
        self.error: BaseException | None = None  # a decompression error, raised again by the caller

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while not self.ready:
            if self.finished:
                return 0
            self._next_chunk()
        piece = self.ready[0]
        n = min(len(buffer), len(piece))
        buffer[:n] = piece[:n]
        if n == len(piece):
            self.ready.popleft()
        else:
            self.ready[0] = piece[n:]
        return n

    def _hand_on(self, piece) -> None:
        if len(piece):  # an empty piece would read as the end of the text
            self.ready.append(memoryview(piece))

    def drain(self) -> bool:
        """Check what the reader left unread; whether the whole body passed."""
        try:
            while not self.finished:
                self._next_chunk()
        except _Refused:
            return False
        return not self.check.failed

    def close(self) -> None:
        self.text.close()
        self.compressed.close()
        super().close()

    def _refuse(self) -> NoReturn:
        self.check.failed = True
        self.finished = True
        self.ready.clear()
        raise _Refused

    def _next_chunk(self) -> None:
        if self.check.failed:
            self._refuse()
        try:
            chunk = self.text.read(CHUNK_BYTES)
        except (EOFError, OSError, zlib.error) as exc:
            self.error = exc
            self._refuse()
        if self.progress:
            self.progress("decompressing and parsing", min(1.0, self.compressed.tell() / self.compressed_size))
        body = chunk  # bytes: the check takes them without a copy
        if self.head:
            head = memoryview(chunk)[:self.head]
            self.head -= len(head)
            self._hand_on(head)
            body = chunk[len(head):]
            if len(head) and not len(body):
                return  # all header; the body follows
        if not len(body):
            self._finish()
            return
        for piece in self.check.lines(body):
            tokens = self.check.tokens_in(piece)
            if tokens < 0:
                self._refuse()
            self.check.tokens += tokens
            self._hand_on(piece)
        if self.check.failed:
            self._refuse()

    def _finish(self) -> None:
        """The end of the text: the carried last line, once it and the token count pass."""
        ending = self.check.ending()
        if ending is None:
            self._refuse()
        tokens = self.check.tokens_in(ending)
        if tokens < 0 or self.check.tokens + tokens != self.check.expected_tokens:
            self._refuse()
        self.check.tokens += tokens
        self._hand_on(self.check.carry)
        self.finished = True


_CLASS_SPACE, _CLASS_DIGIT, _CLASS_SIGN, _CLASS_DOT, _CLASS_EXP, _CLASS_OTHER = range(6)
_CHAR_CLASS = np.full(256, _CLASS_OTHER, dtype=np.uint8)
_CHAR_CLASS[:33] = _CLASS_SPACE
_CHAR_CLASS[list(b"0123456789")] = _CLASS_DIGIT
_CHAR_CLASS[list(b"+-")] = _CLASS_SIGN
_CHAR_CLASS[ord(".")] = _CLASS_DOT
_CHAR_CLASS[list(b"eE")] = _CLASS_EXP


def _body_well_formed(text, width: int, index_fields: int, real: bool) -> int:
    """Tokens in ``text`` (whole lines of digits, whitespace and ``+-.eE``) if SciPy reads them right, else -1.

    Every line holds 0 or ``width`` tokens (blank lines only at the end; one
    inside goes to the scanner); the first ``index_fields`` tokens of an
    entry are unsigned integers; every other token is a number. Only the
    positions of signs, dots and exponent letters are visited (a few per
    number), each with its neighbours.
    """
    raw = np.frombuffer(text, np.uint8)
    n = raw.size
    while n and raw[n - 1] <= 32:  # trailing blank lines (only ever a few bytes here)
        n -= 1
    if not n:
        return 0
    raw = raw[:n]
    is_space = raw <= 32
    starts = np.flatnonzero(is_space[:-1] > is_space[1:]) + 1  # a space, then a token
    if not is_space[0]:
        starts = np.concatenate(([0], starts))
    newlines = np.flatnonzero(raw == ord("\n"))
    # exactly `width` tokens on every line: line k's tokens are starts[k*width : (k+1)*width]
    if starts.size != width * (newlines.size + 1):
        return -1
    if newlines.size and not (bool(np.all(starts[width - 1:-1:width] < newlines))
                              and bool(np.all(newlines < starts[width::width]))):
        return -1
    # signs, dots and exponents: the bytes (already known to be digits, whitespace or
    # "+-.eE") that are neither digits nor whitespace; uint8 arithmetic wraps, so one
    # subtraction and compare finds what is not a digit
    special = np.flatnonzero((raw - np.uint8(48) > 9) & ~is_space)
    if not special.size:
        return int(starts.size)
    # the token each special character sits in; every line holds exactly `width`
    # tokens (checked above), so token k is field k % width of its line
    token = np.searchsorted(starts, special, side="right") - 1
    if index_fields and bool(np.any(token % width < index_fields)):
        return -1  # a sign, dot or exponent inside an index
    kind = _CHAR_CLASS[raw[special]]
    before = _CHAR_CLASS[raw[np.maximum(special - 1, 0)]]
    before[special == 0] = _CLASS_SPACE
    before2 = _CHAR_CLASS[raw[np.maximum(special - 2, 0)]]
    before2[special < 2] = _CLASS_SPACE
    after = _CHAR_CLASS[raw[np.minimum(special + 1, n - 1)]]
    after[special == n - 1] = _CLASS_SPACE
    sign, dot, exp = kind == _CLASS_SIGN, kind == _CLASS_DOT, kind == _CLASS_EXP
    if not real and (dot.any() or exp.any()):
        return -1
    # a sign opens the token or follows the exponent letter, and a digit (or a
    # mantissa's dot) follows it
    sign_ok = ((before == _CLASS_SPACE) & ((after == _CLASS_DIGIT) | (after == _CLASS_DOT))) | \
              ((before == _CLASS_EXP) & (after == _CLASS_DIGIT))
    if not bool(np.all(sign_ok[sign])):
        return -1
    if not real:
        return int(starts.size)
    # a dot has a digit on at least one side (a mantissa needs one) and nothing but digits, whitespace or
    # an exponent after it; an exponent letter follows a digit (or "D.") and precedes a digit or a sign
    dot_ok = ((before == _CLASS_DIGIT) | (after == _CLASS_DIGIT)) & \
             ((after == _CLASS_DIGIT) | (after == _CLASS_SPACE) | ((after == _CLASS_EXP) & (before == _CLASS_DIGIT)))
    exp_ok = ((before == _CLASS_DIGIT) | ((before == _CLASS_DOT) & (before2 == _CLASS_DIGIT))) & \
             ((after == _CLASS_DIGIT) | (after == _CLASS_SIGN))
    if not (bool(np.all(dot_ok[dot])) and bool(np.all(exp_ok[exp]))):
        return -1
    # within one token: at most one dot, at most one exponent, the dot before the exponent
    marks = special[~sign]
    if marks.size >= 2:
        mark_token = token[~sign]
        same_token = mark_token[1:] == mark_token[:-1]
        is_dot = raw[marks] == ord(".")
        ordered = is_dot[:-1] & ~is_dot[1:]  # a dot, then an exponent
        if not bool(np.all(ordered[same_token])):
            return -1
    return int(starts.size)


def _body_chunks_plain(path: Path, offset: int, progress):
    size = path.stat().st_size
    if size <= offset:
        return
    # plain reads, not a memory map: every page of a map that is touched stays in the
    # process's resident set until it is unmapped, adding the file's size to the peak
    with open(path, "rb", buffering=0) as f:
        f.seek(offset)
        done = offset
        while True:
            chunk = f.read(CHUNK_BYTES)
            if not chunk:
                break
            done += len(chunk)
            yield chunk
            if progress:
                progress("checking", min(1.0, done / size))


def _read_fast(path: Path, header: MtxHeader, progress):
    """Parse with SciPy's C++ reader; None when the file needs the line scanner."""
    if header.note:
        return None  # a banner SciPy reads differently (BOM, real Hermitian): the scanner reads it
    if header.stored_entries == 0:
        # nothing to parse, and SciPy 1.17's reader dies of SIGFPE (a division by
        # zero, killing the process) on an array file with zero rows
        return None
    try:
        from scipy.io import _fast_matrix_market  # noqa: F401  (SciPy >= 1.12)
    except ImportError:
        return None
    import scipy.io

    check = _BodyCheck(header)
    if path.name.endswith(".gz"):
        parsed = _parse_checked_gz(path, header, check, progress)
        if parsed is None:
            return None
    else:
        for chunk in _body_chunks_plain(path, header.body_offset, progress):
            check.feed(chunk)
        if not check.clean():
            return None
        if progress:
            progress("parsing", None)
        try:
            parsed = scipy.io.mmread(str(path))
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


def _parse_checked_gz(path: Path, header: MtxHeader, check: _BodyCheck, progress):
    """SciPy's reader on a ``.gz`` file's text as it passes the check (:class:`_CheckedText`); None if it fails."""
    import scipy.io

    with _CheckedText(path, header, check, progress) as text:
        try:
            parsed = scipy.io.mmread(io.BufferedReader(text, buffer_size=CHUNK_BYTES))
            whole = text.drain()  # the reader may stop after the declared entries
        except (_Refused, ValueError, OverflowError, MemoryError, RuntimeError):
            parsed, whole = None, False
        if text.error is not None:
            raise text.error  # a corrupt .gz: read_mtx_scipy names it
    return parsed if whole else None


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
    is_complex = header.field == "complex"
    # Grown as entries arrive rather than sized from the size line: a small .gz
    # may declare far more entries than it holds (deflate's ratio only bounds it).
    capacity = min(entries, SCAN_ANYWAY_ENTRIES)
    values = np.empty(capacity, dtype=np.complex128 if is_complex else np.int64 if is_int else np.float64)
    rows = np.empty(0 if is_array else capacity, dtype=np.int64)
    cols = np.empty(0 if is_array else capacity, dtype=np.int64)
    value_names = ("real", "imaginary") if is_complex else ("value",)
    names = value_names if is_array else (("row", "column") + value_names)[:width]
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
                                        f"found {len(words)}: {show(text)}", path=path, line=line_no)
            if count == entries:
                raise MatrixFormatError(f"more entries than the {entries} declared on line {header.size_line}",
                                        path=path, line=line_no)
            if count == capacity:
                capacity = min(entries, 2 * capacity)
                values = np.resize(values, capacity)
                if not is_array:
                    rows, cols = np.resize(rows, capacity), np.resize(cols, capacity)
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
                    integer = _parse_int(word, "integer value", path, line_no)
                    if not -INT64_MAX - 1 <= integer <= INT64_MAX:
                        raise MatrixFormatError(f"integer value {show(word)} is beyond int64's range "
                                                f"(-2**63 .. 2**63 - 1)", path=path, line=line_no)
                    values[count] = integer
                elif is_complex:
                    values[count] = complex(_parse_float(words[-2], path, line_no), _parse_float(word, path, line_no))
                else:
                    values[count] = _parse_float(word, path, line_no)
            if header.symmetry == "skew-symmetric" and not is_array and rows[count] == cols[count] \
                    and values[count] != 0:
                raise MatrixFormatError(f"a skew-symmetric matrix must have a zero diagonal, found {show(word)}",
                                        path=path, line=line_no)
            count += 1
    if count < entries:
        raise MatrixFormatError(f"truncated: line {header.size_line} declares {entries} entries but the file "
                                f"ends after {count}", path=path, line=line_no + 1)
    if header.field == "pattern":
        values = np.ones(count, dtype=np.float64)
    if is_array:
        return _array_body_to_coo(values, header)
    return _expand_symmetry(rows, cols, values, header.symmetry)


def _parse_int(word: str, what: str, path, line_no: int) -> int:
    try:
        if "_" in word:
            raise ValueError
        return int(word)
    except ValueError:
        raise MatrixFormatError(f"{what} {show(word)} is not an integer", path=path, line=line_no) from None


def _parse_float(word: str, path, line_no: int) -> float:
    try:
        if "_" in word:
            raise ValueError
        return float(word)
    except ValueError:
        raise MatrixFormatError(f"value {show(word)} is not a number", path=path, line=line_no) from None


def _array_body_to_coo(values: np.ndarray, header: MtxHeader):
    n_rows, n_cols = header.n_rows, header.n_cols
    if not values.size:  # 0 x N or N x 0: no dense array to build (N may exceed any array's size)
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, values
    if header.symmetry == "general":
        dense = values.reshape((n_cols, n_rows)).T  # array files are column-major
        return _array_to_coo(dense)
    # the lower triangle, column by column (strictly lower for skew-symmetric)
    offset = 1 if header.symmetry == "skew-symmetric" else 0
    rows, cols = np.tril_indices(n_rows, -offset)
    order = np.lexsort((rows, cols))
    rows, cols = rows[order], cols[order]
    dense = np.zeros((n_rows, n_cols), dtype=values.dtype)
    dense[rows, cols] = values
    off = rows != cols
    dense[cols[off], rows[off]] = _mirror(values[off], header.symmetry)
    return _array_to_coo(dense)


def _mirror(values, symmetry: str):
    """The values stored for the upper triangle, from the lower triangle's."""
    if symmetry == "skew-symmetric":
        return -values
    if symmetry == "hermitian":
        return np.conj(values)
    return values


def _expand_symmetry(rows, cols, values, symmetry: str):
    if symmetry == "general":
        return rows, cols, values
    off = rows != cols
    mirror = _mirror(values[off], symmetry)
    return (np.concatenate((rows, cols[off])), np.concatenate((cols, rows[off])),
            np.concatenate((values, mirror)))


# ------------------------------------------------------------------ public API
def read_mtx_scipy(path, *, progress=None):
    """Read a Matrix Market file into a ``scipy.sparse.csr_matrix`` (the arrays behind :func:`read_mtx`).

    Values are float64, int64 (integer files, exactly) or complex128; the
    rest is as :func:`read_mtx`.
    """
    import scipy.sparse as sp

    path = Path(path)
    try:
        with _open_binary(path) as stream:
            header = read_header(stream, path)
    except (EOFError, gzip.BadGzipFile, zlib.error, OSError) as exc:
        if isinstance(exc, (FileNotFoundError, IsADirectoryError, PermissionError)):
            raise
        raise MatrixFormatError(f"cannot read the file: {exc}", path=path) from None
    body_fits = _check_declared_sizes(header, path)
    try:
        triplets = _read_fast(path, header, progress) if body_fits else None
        parser = "scipy.io.mmread (fast_matrix_market)"
        body_check: str | None = "numpy" if native.mtx_checker() is None else "compiled"
        if triplets is None:
            triplets = _scan(path, header, progress)
            parser, body_check = "spla line scanner", None
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise MatrixFormatError(f"corrupt .gz file: {exc}", path=path) from None
    rows, cols, values = triplets
    if progress:
        progress("building CSR", None)
    value_type = {"complex": np.complex128, "integer": np.int64}.get(header.field, np.float64)
    try:
        coo = sp.coo_matrix((np.asarray(values, dtype=value_type), (rows, cols)),
                            shape=(header.n_rows, header.n_cols))
        del rows, cols, values, triplets
        csr = coo.tocsr()  # sums duplicates, keeps explicit zeros
        coo_nnz = coo.nnz
        if header.field == "integer" and coo_nnz != csr.nnz:
            _check_duplicate_sums(coo, csr, path)
        del coo
    except MemoryError:
        raise MatrixFormatError(
            f"not enough memory for the {header.n_rows} x {header.n_cols} matrix the size line declares "
            f"(its row pointer alone needs {8 * (header.n_rows + 1) / 2**30:.1f} GiB)",
            path=path, line=header.size_line) from None
    info = {
        "format": f"matrix market {header.format}",
        "field": header.field,
        "symmetry": header.symmetry,
        "entries_in_file": header.stored_entries,
        "duplicates_summed": int(coo_nnz - csr.nnz),
        "parser": parser,
        "body_check": body_check,
        "comments": header.comments[:20],
    }
    if header.note:
        info["note"] = header.note
    return csr, info


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
        Duplicates summed; float64 values for real and pattern files,
        complex128 for complex ones, integer files exactly (int64 where
        CSRMatrix holds it, else float64 with every value checked to be exact).
    info : dict
        ``format``, ``field``, ``symmetry``, ``entries_in_file``,
        ``duplicates_summed``, ``parser``, ``body_check`` (how the text was
        checked before SciPy's reader got it: ``"compiled"`` or ``"numpy"``,
        None when the line scanner read it; see :mod:`spla.io.native`), the
        header ``comments`` and, when the banner needed it, a ``note``.

    Raises
    ------
    MatrixFormatError
        Naming the file and line of the first problem found.
    HostMemoryError
        The declared sizes need more memory than is available (before any allocation).

    See Also
    --------
    scipy.io.mmread, read_mtx_scipy
    """
    from ..csr import CSRMatrix

    csr, info = read_mtx_scipy(path, progress=progress)
    # SciPy built a valid CSR: skip CSRMatrix's O(rows) re-validation
    A = CSRMatrix(csr.data, csr.indices, csr.indptr, csr.shape, validate=False)
    if info["field"] == "integer" and A.dtype.kind != "i":
        _check_exact_integers(csr.data, Path(path), limit=FLOAT64_EXACT_INT,
                              what=f"{A.dtype.name}, spla's value type")
    return A, info


def _check_duplicate_sums(coo, csr, path) -> None:
    """Refuse integer duplicates whose sum wrapped around int64 (SciPy sums them silently modulo 2**64)."""
    data = coo.data
    if not data.size or max(abs(int(data.max())), abs(int(data.min()))) * data.size <= INT64_MAX:
        return  # no sum of these values can reach 2**63
    approximate = coo.astype(np.float64).tocsr()
    approximate.sort_indices()
    exact = csr.copy()
    exact.sort_indices()
    if np.any(np.abs(approximate.data - exact.data.astype(np.float64)) > 2.0**62):
        raise MatrixFormatError("the sum of duplicate integer entries overflows int64", path=path)


def _check_exact_integers(data: np.ndarray, path, *, limit: int = INT64_MAX, what: str = "int64") -> None:
    """Refuse integer values (after duplicates are summed) that ``what`` cannot hold exactly."""
    if not data.size:
        return
    low, high = int(data.min()), int(data.max())
    if high > limit or low < -limit:
        bad = high if high > limit else low
        raise MatrixFormatError(f"integer value {bad} cannot be held exactly in {what} (|value| <= {limit}); "
                                f"spla refuses rather than rounds it", path=path)


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

    from ..csr import as_csr
    from .cache import atomic_file

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

