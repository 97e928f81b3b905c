"""Fuzzing the Matrix Market and SNAP readers with hostile files.

Property, for every input: :func:`spla.io.mmio.read_mtx` / :func:`spla.io.snap.read_snap`
either return exactly the matrix a strict reference reader (written here,
independently of spla's two-tier parser) builds, which for Matrix Market is
also what SciPy's ``mmread`` loads whenever SciPy can load it, or raise
:class:`spla.MatrixFormatError` naming the file and the first bad line (the
reference's line). Any other exception, a result that differs, a wrong line,
an input that takes seconds, or an allocation of gigabytes (the address space
is capped while fuzzing) is a failure.

Inputs come from two sources:

- a seeded mutation corpus: valid files in many spellings (every field and
  symmetry, array and coordinate, tabs, CRLF, comments and blank lines in odd
  places, NaN/Inf, .gz) put through 0-3 mutations each (truncation, flipped
  bytes, swapped header fields, huge declared sizes, zero/negative indices,
  extra/missing entries, mixed line endings, a UTF-8 BOM, junk tokens,
  damaged .gz streams);
- hypothesis, drawing the same recipes (and shrinking a failure to a small
  one).

CI runs a fixed seed in well under a minute. A larger run::

    SPLA_FUZZ_SECONDS=600 python -m pytest tests/test_fuzz_mmio.py -q -s

spends the given seconds on the mutation corpus (new seeds, split between
Matrix Market and SNAP), ``SPLA_FUZZ_EXAMPLES=N`` sets hypothesis'
examples per test, ``SPLA_FUZZ_SEED`` moves the corpus' first seed, and
``SPLA_FUZZ_FAILURES=DIR`` keeps every failing input there. Each corpus test
prints how many inputs it tried and how they ended.
"""

from __future__ import annotations

import collections
import contextlib
import gzip
import os
import resource
import signal
import time
import zlib
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from spla import MatrixFormatError  # noqa: E402
from spla.errors import HostMemoryError  # noqa: E402
from spla.io import mmio, snap  # noqa: E402

FUZZ_SECONDS = float(os.environ.get("SPLA_FUZZ_SECONDS", "0") or 0)
FUZZ_EXAMPLES = int(os.environ.get("SPLA_FUZZ_EXAMPLES", "0") or 0)
FUZZ_SEED = int(os.environ.get("SPLA_FUZZ_SEED", "20261202"))
FAILURE_DIR = os.environ.get("SPLA_FUZZ_FAILURES")
CI_CORPUS = {"mtx": 2500, "snap": 1500}  # inputs per corpus test in CI (a few seconds each)
CI_EXAMPLES = 400                      # hypothesis examples per test in CI
SLOW_SECONDS = 5.0                     # a tiny file that takes this long counts as a hang
ADDRESS_SPACE_HEADROOM = 3 << 30       # allocations beyond this much fail the input


class Invalid(Exception):
    """The reference reader's verdict: this input is malformed at ``line`` (None: unreadable .gz)."""

    def __init__(self, line, why, *, also=(), may_load=False):
        super().__init__(f"line {line}: {why}")
        self.line = line
        self.why = why
        self.also = set(also)  # further lines an error may name (the size line for impossible sizes)
        self.may_load = may_load  # valid, but big enough that running out of memory is a fair answer
        self.memory_ok = may_load  # declared sizes big enough that spla may refuse them for memory


# a matrix whose row pointer needs more than this may fail for lack of memory (the fuzz caps the address space)
BIG_ROWS = 1 << 27
PHYSICAL_MEMORY = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
# declared sizes needing more than this may be refused up front with HostMemoryError (one line);
# the fuzz caps the address space at ADDRESS_SPACE_HEADROOM, below which spla's budget falls
MEMORY_OK_BYTES = 1 << 28
INT64_MAX = 2**63 - 1


# ===================================================================== Matrix Market reference
def _lines(text: bytes):
    """Lines as Python's binary file iteration yields them (split after b"\\n")."""
    parts = text.split(b"\n")
    lines = [p + b"\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _words(raw: bytes):
    return raw.decode("ascii", "replace").strip()


def _int(word: str):
    if "_" in word:
        raise ValueError
    return int(word)


def _float(word: str):
    if "_" in word:
        raise ValueError
    return float(word)


def reference_mtx(text: bytes, compressed_size: int | None = None):
    """Strict Matrix Market reader: (shape, rows, cols, values) in spla's order, or raise Invalid."""
    if text.startswith(b"\xef\xbb\xbf"):
        text = text[3:]  # a UTF-8 byte-order mark is skipped
    lines = _lines(text)
    banner = _words(lines[0]).split() if lines else []
    if len(banner) != 5 or banner[0].lower() != "%%matrixmarket":
        raise Invalid(1, "banner")
    obj, fmt, fld, sym = (w.lower() for w in banner[1:])
    if obj != "matrix" or fmt not in ("coordinate", "array") \
            or fld not in ("real", "double", "integer", "pattern", "complex") \
            or sym not in ("general", "symmetric", "skew-symmetric", "hermitian") \
            or (fmt == "array" and fld == "pattern") or (sym == "skew-symmetric" and fld == "pattern"):
        raise Invalid(1, "banner words")
    fld = "real" if fld == "double" else fld
    if sym == "hermitian" and fld != "complex":
        sym = "symmetric"  # a real value is its own conjugate
    try:
        return _reference_mtx_body(lines, fmt, fld, sym, compressed_size)
    except Invalid as exc:
        exc.memory_ok = exc.memory_ok or getattr(_declared, "big", False)
        raise
    finally:
        _declared.big = False


class _Declared:
    big = False


_declared = _Declared()


def _reference_mtx_body(lines, fmt, fld, sym, compressed_size):
    number = 1
    while True:
        if number >= len(lines):
            raise Invalid(number + 1, "no size line")
        raw = lines[number]
        number += 1
        stripped = _words(raw)
        if stripped and not stripped.startswith("%"):
            break
    size_line = number
    words = stripped.split()
    if len(words) != (3 if fmt == "coordinate" else 2):
        raise Invalid(size_line, "size line width")
    try:
        sizes = [_int(w) for w in words]
    except ValueError:
        raise Invalid(size_line, "size line not integers") from None
    if min(sizes) < 0 or max(sizes) > 2**63 - 1 or (sym != "general" and sizes[0] != sizes[1]):
        raise Invalid(size_line, "size line values")
    n_rows, n_cols = sizes[:2]
    if fmt == "coordinate":
        entries = sizes[2]
    elif sym in ("symmetric", "hermitian"):
        entries = n_rows * (n_rows + 1) // 2
    elif sym == "skew-symmetric":
        entries = n_rows * (n_rows - 1) // 2
    else:
        entries = n_rows * n_cols
    per_value = 2 if fld == "complex" else 1
    width = per_value if fmt == "array" else (2 if fld == "pattern" else 2 + per_value)
    stored = n_rows * n_cols if fmt == "array" else entries * (1 if sym == "general" else 2)
    _declared.big = 8 * (n_rows + 1) + 64 * stored > MEMORY_OK_BYTES
    body_bytes = sum(len(line) for line in lines[size_line:])
    available = compressed_size * mmio.DEFLATE_MAX_RATIO if compressed_size is not None else body_bytes
    # spla refuses impossible sizes at the size line before reading the body (documented)
    impossible = {size_line} if entries * 2 * width - 1 > available or n_rows > BIG_ROWS else set()
    if entries * 2 * width - 1 > available and entries > mmio.SCAN_ANYWAY_ENTRIES:
        raise Invalid(size_line, "impossible size")
    rows, cols, values = [], [], []
    number = size_line
    for raw in lines[size_line:]:
        number += 1
        stripped = _words(raw)
        if not stripped or stripped.startswith("%"):
            continue
        words = stripped.split()
        if len(words) != width or len(values) == entries:
            raise Invalid(number, "width or extra entry", also=impossible)
        try:
            if fmt == "coordinate":
                i, j = _int(words[0]), _int(words[1])
                if not (1 <= i <= n_rows and 1 <= j <= n_cols):
                    raise ValueError
                rows.append(i - 1)
                cols.append(j - 1)
            if fld == "pattern":
                value = 1.0
            elif fld == "integer":
                value = _int(words[-1])
                if not -INT64_MAX - 1 <= value <= INT64_MAX:
                    raise ValueError
            elif fld == "complex":
                value = complex(_float(words[-2]), _float(words[-1]))
            else:
                value = _float(words[-1])
        except (ValueError, OverflowError):
            raise Invalid(number, "bad number", also=impossible) from None
        if sym == "skew-symmetric" and fmt == "coordinate" and rows[-1] == cols[-1] and value != 0:
            raise Invalid(number, "skew diagonal", also=impossible)
        values.append(value)
    if len(values) < entries:
        raise Invalid(number + 1, "truncated", also=impossible)
    if n_rows > BIG_ROWS or _declared.big:
        raise Invalid(size_line, "valid but big", may_load=True)
    value_type = {"integer": np.int64, "complex": np.complex128}.get(fld, np.float64)
    if fld == "integer" and fmt == "coordinate":
        sums = collections.Counter()
        for i, j, v in zip(rows, cols, values):
            sums[i, j] += v
            if sym != "general" and i != j:
                sums[j, i] += -v if sym == "skew-symmetric" else v
        if any(not -INT64_MAX - 1 <= s <= INT64_MAX for s in sums.values()):
            raise Invalid(None, "duplicates sum beyond int64")
    values = np.array(values, dtype=value_type)
    if fmt == "array":
        if not values.size:
            return (n_rows, n_cols), np.zeros(0, np.int64), np.zeros(0, np.int64), values
        if sym == "general":
            dense = values.reshape((n_cols, n_rows)).T
        else:
            dense = np.zeros((n_rows, n_cols), dtype=value_type)
            k = 0
            for j in range(n_cols):
                for i in range(j + (sym == "skew-symmetric"), n_rows):
                    dense[i, j] = values[k]
                    if i != j:
                        dense[j, i] = {"symmetric": values[k], "skew-symmetric": -values[k],
                                       "hermitian": np.conj(values[k])}[sym]
                    k += 1
        r, c = np.nonzero(dense)
        return (n_rows, n_cols), r, c, dense[r, c]
    rows, cols = np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64)
    if sym != "general":
        off = rows != cols
        mirror = {"symmetric": values[off], "skew-symmetric": -values[off], "hermitian": np.conj(values[off])}[sym]
        rows, cols, values = (np.concatenate((rows, cols[off])), np.concatenate((cols, rows[off])),
                              np.concatenate((values, mirror)))
    return (n_rows, n_cols), rows, cols, values


def csr_of(shape, rows, cols, values):
    return sp.coo_matrix((values, (rows, cols)), shape=shape).tocsr()


def same_matrix(A, B) -> bool:
    """Structure equal, values equal (NaN equal to NaN; duplicate sums may round differently)."""
    A, B = sp.csr_matrix(A), sp.csr_matrix(B)
    A.sort_indices()
    B.sort_indices()
    if A.shape != B.shape or not np.array_equal(A.indptr, B.indptr) or not np.array_equal(A.indices, B.indices):
        return False
    if np.iscomplexobj(A.data) or np.iscomplexobj(B.data):
        return all(same_matrix(sp.csr_matrix((part(A.data), A.indices, A.indptr), shape=A.shape),
                               sp.csr_matrix((part(B.data), B.indices, B.indptr), shape=B.shape))
                   for part in (np.real, np.imag))
    if A.data.dtype.kind == "i" and B.data.dtype.kind == "i":
        return bool(np.array_equal(A.data, B.data))  # integers are exact
    a, b = A.data.astype(np.float64), B.data.astype(np.float64)
    same_class = np.array_equal(np.isnan(a), np.isnan(b)) and np.array_equal(np.isinf(a), np.isinf(b))
    finite = np.isfinite(a) & np.isfinite(b)
    return bool(same_class and np.array_equal(a[~finite & ~np.isnan(a)], b[~finite & ~np.isnan(b)])
                and np.allclose(a[finite], b[finite], rtol=1e-13, atol=0))


def scipy_loads(path: Path, text: bytes):
    """What scipy.io.mmread makes of the file, as CSR, or None when it refuses it."""
    # inputs that kill the process inside SciPy 1.17's reader (spla keeps them away from it too)
    if text and text[-1] <= 32 and text[-1] != ord("\n"):
        return None  # segfault: trailing space/tab/CR after the last value, no newline
    try:
        with mmio._open_binary(path) as stream:
            header = mmio.read_header(stream, path)
        if header.stored_entries == 0:
            return None  # SIGFPE: an array file with zero rows
        M = scipy.io.mmread(str(path))
    except Exception:
        return None
    return sp.csr_matrix(M) if sp.issparse(M) else sp.csr_matrix(np.asarray(M))


# ===================================================================== SNAP reference
def reference_snap(text: bytes):
    """Strict SNAP reader: (n, src, dst) or raise Invalid."""
    if text.startswith(b"\xef\xbb\xbf"):
        text = text[3:]  # a UTF-8 byte-order mark is skipped
    pairs = []
    for number, raw in enumerate(text.split(b"\n"), start=1):
        line = raw.strip()
        if not line or line.startswith(b"#"):
            continue
        words = line.split()
        if len(words) != 2:
            raise Invalid(number, "width")
        pair = []
        for word in words:
            if not (word.isdigit() and word.isascii()) or int(word) > snap.max_node_id():
                raise Invalid(number, "not a node id (or one whose row pointer cannot fit in memory)")
            pair.append(int(word))
        pairs.append(pair)
    edges = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    n = int(edges.max()) + 1 if edges.size else 0
    if n > BIG_ROWS:
        # the first line holding the largest id is the one to blame
        first = next(k for k, raw in enumerate(text.split(b"\n"), start=1)
                     if raw.strip() and not raw.strip().startswith(b"#") and n - 1 in map(int, raw.split()))
        raise Invalid(first, "node id too large for memory", may_load=8 * (n + 1) <= PHYSICAL_MEMORY)
    return n, edges[:, 0], edges[:, 1]


# ===================================================================== file recipes
def _format_real(rng, value):
    style = rng.integers(7)
    if style == 0:
        return repr(float(value))
    if style == 1:
        return f"{value:.6e}"
    if style == 2:
        return f"{value:g}"
    if style == 3:
        return f"{value:+.3E}"
    if style == 4:
        return str(int(round(value * 100)))
    if style == 5:
        return rng.choice(["nan", "NaN", "inf", "-inf", "+Inf", "-0", "0", "1e-310", "1e308", "3.", ".5"])
    return f"{value:.17g}"


def valid_mtx(rng):
    """A random valid Matrix Market text (bytes) and whether to gzip it."""
    fmt = "array" if rng.random() < 0.2 else "coordinate"
    fields = ["real", "double", "integer", "complex"] + ([] if fmt == "array" else ["pattern"])
    fld = str(rng.choice(fields))
    symmetries = ["general", "symmetric", "hermitian"] + ([] if fld == "pattern" else ["skew-symmetric"])
    sym = str(rng.choice(symmetries))
    n_rows = int(rng.integers(0, 7))
    n_cols = n_rows if sym != "general" else int(rng.integers(0, 7))
    spaces = [" ", "  ", "\t", " \t "]
    sep = lambda: str(rng.choice(spaces)) if rng.random() < 0.3 else " "  # noqa: E731
    end = lambda: "\r\n" if rng.random() < 0.15 else "\n"  # noqa: E731

    def value():
        if fld == "integer":
            draw = rng.random()
            if draw < 0.85:
                return str(int(rng.integers(-10**6, 10**6)))
            if draw < 0.97:  # past 2**53: exact only as int64
                return str(int(rng.integers(-2**63, 2**63 - 1, endpoint=True)))
            return str(int(rng.choice([-1, 1])) * (2**63 + int(rng.integers(0, 10**6))))  # beyond int64
        if fld == "complex":
            return " ".join(_format_real(rng, rng.standard_normal() * 10.0 ** rng.integers(-5, 5)) for _ in "ri")
        return _format_real(rng, rng.standard_normal() * 10.0 ** rng.integers(-5, 5))

    entries = []
    if fmt == "coordinate":
        if n_rows and n_cols:
            for _ in range(int(rng.integers(0, 12))):
                i, j = int(rng.integers(1, n_rows + 1)), int(rng.integers(1, n_cols + 1))
                if sym != "general":
                    i, j = max(i, j), min(i, j)
                if sym == "skew-symmetric" and i == j:
                    continue
                fields_ = [str(i), str(j)] + ([] if fld == "pattern" else [value()])
                entries.append(sep().join(fields_))
    else:
        count = {"general": n_rows * n_cols, "symmetric": n_rows * (n_rows + 1) // 2,
                 "hermitian": n_rows * (n_rows + 1) // 2,
                 "skew-symmetric": n_rows * (n_rows - 1) // 2}[sym]
        entries = [value() for _ in range(count)]
    banner = ["%%MatrixMarket", "matrix", fmt, fld, sym]
    if rng.random() < 0.2:
        banner = [w.upper() if rng.random() < 0.5 else w for w in banner]
    out = [" ".join(banner) + end()]
    for _ in range(int(rng.integers(0, 3))):
        out.append(str(rng.choice(["%", "% a comment", "%%  more", "", "   ", "\t"])) + end())
    sizes = [n_rows, n_cols] + ([len(entries)] if fmt == "coordinate" else [])
    out.append(sep().join(map(str, sizes)) + end())
    for entry in entries:
        if rng.random() < 0.08:
            out.append(str(rng.choice(["% between", "", " "])) + end())
        lead = " " if rng.random() < 0.05 else ""
        out.append(lead + entry + (" " if rng.random() < 0.05 else "") + end())
    text = "".join(out)
    if text.endswith("\n") and rng.random() < 0.15:
        text = text.rstrip("\r\n")
    return text.encode(), bool(rng.random() < 0.2)


def valid_snap(rng):
    out = []
    end = lambda: "\r\n" if rng.random() < 0.15 else "\n"  # noqa: E731
    for _ in range(int(rng.integers(0, 3))):
        out.append(str(rng.choice(["# Directed graph", "# Nodes: 5 Edges: 7", "#", ""])) + end())
    top = int(rng.choice([3, 10, 1000, 2**40]))
    for _ in range(int(rng.integers(0, 15))):
        if rng.random() < 0.05:
            out.append(str(rng.choice(["# inner", "", "  "])) + end())
        sep = str(rng.choice([" ", "\t", "  "]))
        out.append(f"{int(rng.integers(0, min(top, 50)))}{sep}{int(rng.integers(0, min(top, 50)))}" + end())
    text = "".join(out)
    if text.endswith("\n") and rng.random() < 0.2:
        text = text.rstrip("\r\n")
    return text.encode(), bool(rng.random() < 0.2)


def _line_spans(text: bytes):
    spans, start = [], 0
    for raw in _lines(text):
        spans.append((start, start + len(raw)))
        start += len(raw)
    return spans


def _replace_line(text, rng, make):
    spans = _line_spans(text)
    if not spans:
        return text
    a, b = spans[int(rng.integers(len(spans)))]
    line = text[a:b]
    newline = line[len(line.rstrip(b"\r\n")):]
    return text[:a] + make(line.rstrip(b"\r\n")) + newline + text[b:]


def _swap_header_fields(text, rng):
    lines = text.split(b"\n")
    target = 0 if rng.random() < 0.5 or len(lines) < 2 else next(
        (k for k, ln in enumerate(lines[1:], 1) if ln.strip() and not ln.strip().startswith(b"%")), 0)
    words = lines[target].split()
    if len(words) >= 2:
        a, b = rng.choice(len(words), size=2, replace=False)
        words[a], words[b] = words[b], words[a]
        lines[target] = b" ".join(words)
    return b"\n".join(lines)


def _huge_size(text, rng):
    lines = text.split(b"\n")
    for k, line in enumerate(lines[1:], 1):
        if line.strip() and not line.strip().startswith((b"%", b"#")):
            words = line.split()
            if words:
                slot = int(rng.integers(len(words)))
                words[slot] = str(rng.choice([10**12, 2**31 + 5, 2**32, 2**63, 10**30, 5 * 10**6, 2**22 + 1,
                                              10**18])).encode()
                lines[k] = b" ".join(words)
            break
    return b"\n".join(lines)


def _bad_index(text, rng):
    def make(line):
        words = line.split()
        if len(words) >= 2:
            words[int(rng.integers(2))] = str(rng.choice(["0", "-1", "-0", "+1", "99", "1.0", "1e0", "0x1"])).encode()
        return b" ".join(words)
    return _replace_line(text, rng, make)


def _junk_token(text, rng):
    junk = str(rng.choice(["abc", "1e", "e5", ".", "-", "+", "1..2", "1e+", "nan(1)", "infinity", "1_0", "--1",
                           "0x10", "1,5", "%", "#", "1 2", "\x00", "\x1c", "\u00e9", "9" * 25, "1e999",
                           "-1e999", "4294967297", "\x0b", "\x0c"]))

    def make(line):
        words = line.split() or [b""]
        position = int(rng.integers(len(words) + 1))
        if rng.random() < 0.5 and position < len(words):
            words[position] = junk.encode()
        else:
            words.insert(position, junk.encode())
        return b" ".join(words)
    return _replace_line(text, rng, make)


def _flip_bytes(text, rng):
    data = bytearray(text)
    for _ in range(int(rng.integers(1, 4))):
        if data:
            k = int(rng.integers(len(data)))
            data[k] = int(rng.integers(256)) if rng.random() < 0.5 else data[k] ^ (1 << int(rng.integers(8)))
    return bytes(data)


def _insert_line(text, rng):
    spans = _line_spans(text)
    at = spans[int(rng.integers(len(spans)))][0] if spans else 0
    extra = str(rng.choice(["", "%", "% comment", "#", "# comment", "  ", "\t", "1 1 1", "1 1", "0 0",
                            "2 3 4 5", "\r"])) + ("\r\n" if rng.random() < 0.3 else "\n")
    return text[:at] + extra.encode() + text[at:]


def _delete_line(text, rng):
    spans = _line_spans(text)
    if not spans:
        return text
    a, b = spans[int(rng.integers(len(spans)))]
    return text[:a] + text[b:]


def _duplicate_line(text, rng):
    spans = _line_spans(text)
    if not spans:
        return text
    a, b = spans[int(rng.integers(len(spans)))]
    line = text[a:b] if text[a:b].endswith(b"\n") else text[a:b] + b"\n"
    return text[:a] + line + text[a:]


def _line_endings(text, rng):
    choice = rng.integers(3)
    if choice == 0:
        return text.replace(b"\n", b"\r\n")
    if choice == 1:
        return b"".join(line.replace(b"\n", b"\r\n") if rng.random() < 0.5 else line for line in _lines(text))
    return text.replace(b"\n", b"\r", 1) if rng.random() < 0.5 else text.replace(b"\n", b"\n\n", 1)


MUTATIONS = {
    "truncate": lambda t, rng: t[: int(rng.integers(len(t) + 1))],
    "flip bytes": _flip_bytes,
    "swap header fields": _swap_header_fields,
    "huge size": _huge_size,
    "bad index": _bad_index,
    "junk token": _junk_token,
    "insert line": _insert_line,
    "delete line": _delete_line,
    "duplicate line": _duplicate_line,
    "line endings": _line_endings,
    "bom": lambda t, rng: b"\xef\xbb\xbf" + t,
    "tabs": lambda t, rng: t.replace(b" ", b"\t"),
    "trailing whitespace": lambda t, rng: t + str(rng.choice(["\n", "\n\n", " ", "\t\n", "\r\n"])).encode(),
}
MUTATION_NAMES = tuple(MUTATIONS)


def damage_gzip(data: bytes, rng) -> bytes:
    choice = rng.integers(3)
    if choice == 0:
        return data[: int(rng.integers(len(data)))]
    if choice == 1:
        return _flip_bytes(data, rng)
    return data + data[: int(rng.integers(1, 20))]  # trailing garbage / a second, broken member


def make_input(kind: str, seed: int):
    """(name, bytes on disk, decompressed text or None if the .gz is damaged, mutations applied)."""
    rng = np.random.default_rng(seed)
    text, gz = (valid_mtx if kind == "mtx" else valid_snap)(rng)
    applied = []
    for _ in range(int(rng.choice([0, 1, 1, 1, 2, 2, 3]))):
        name = str(rng.choice(MUTATION_NAMES))
        text = MUTATIONS[name](text, rng)
        applied.append(name)
    suffix = ".mtx" if kind == "mtx" else ".txt"
    if not gz:
        return f"m{suffix}", text, text, applied
    data = gzip.compress(text, mtime=0)
    if rng.random() < 0.25:
        data = damage_gzip(data, rng)
        applied.append("damaged gz")
        try:
            text = gzip.decompress(data)
        except (OSError, EOFError, zlib.error):
            text = None
    return f"m{suffix}.gz", data, text, applied


# ===================================================================== the check
@contextlib.contextmanager
def guarded():
    """Cap the address space (a huge allocation fails fast) and time out a hang."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/statm") as f:
        current = int(f.read().split()[0]) * resource.getpagesize()
    cap = current + ADDRESS_SPACE_HEADROOM
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    if soft == resource.RLIM_INFINITY or soft > cap:
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))

    def alarm(signum, frame):
        raise TimeoutError("input took longer than 30 s")

    previous = signal.signal(signal.SIGALRM, alarm)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def check_one(kind: str, folder: Path, name: str, data: bytes, text) -> str:
    """Run spla and the reference on one input; return the outcome, raise AssertionError on a failure."""
    path = folder / name
    path.write_bytes(data)
    compressed = len(data) if name.endswith(".gz") else None
    expected = None
    try:
        if text is None:
            raise Invalid(None, "damaged gz")
        expected = reference_mtx(text, compressed) if kind == "mtx" else reference_snap(text)
    except Invalid as exc:
        expected = exc
    # the arrays behind read_mtx (complex and int64 values whatever CSRMatrix holds)
    reader = mmio.read_mtx_scipy if kind == "mtx" else snap.read_snap
    signal.alarm(30)
    start = time.perf_counter()
    try:
        A, _info = reader(path)
        got = A if sp.issparse(A) else A.to_scipy()
    except HostMemoryError as exc:
        assert "\n" not in str(exc) and "GiB" in str(exc), f"memory error is not one line with sizes: {exc}"
        # a damaged .gz may be refused any way; otherwise the declared sizes must be big
        assert isinstance(expected, Invalid) and (expected.memory_ok or expected.line is None), \
            f"refused for memory: {exc}"
        return "refused (memory)"
    except MatrixFormatError as exc:
        got = exc
    except Exception as exc:  # noqa: BLE001 - any other type is the failure being looked for
        raise AssertionError(f"{type(exc).__name__} instead of MatrixFormatError: {exc}") from exc
    finally:
        signal.alarm(0)
    seconds = time.perf_counter() - start
    big = isinstance(expected, Invalid) and expected.may_load  # its time grows with the declared size
    assert seconds < SLOW_SECONDS or big, f"took {seconds:.1f} s"
    if isinstance(got, MatrixFormatError):
        assert got.path == str(path), f"error does not name the file: {got}"
        assert "\n" not in str(got), "error is not one line"
        if not isinstance(expected, Invalid):
            raise AssertionError(f"refused a valid file: {got}")
        if expected.line is None:  # a damaged .gz or a whole-matrix fault: any line, or none, will do
            return "refused (damaged gz)" if text is None else "refused (no line)"
        allowed = {expected.line} | expected.also
        assert got.line in allowed, f"error names line {got.line}, expected {sorted(allowed)}: {got}"
        return "refused"
    if isinstance(expected, Invalid):
        if expected.may_load:
            return "loaded (big)"
        raise AssertionError(f"loaded a file the reference refuses ({expected}) as {got.shape}, nnz {got.nnz}")
    if kind == "mtx":
        shape, rows, cols, values = expected
        want = csr_of(shape, rows, cols, values)
        assert same_matrix(got, want), "differs from the reference reader"
        from_scipy = scipy_loads(path, text)
        # SciPy negates a complex skew mirror as a product by -1, which turns an infinite part into NaN
        scipy_exact = not (np.iscomplexobj(want.data) and not np.all(np.isfinite(want.data)))
        if from_scipy is not None and from_scipy.shape == want.shape and scipy_exact:
            assert same_matrix(got, from_scipy), "differs from scipy.io.mmread"
        assert got.dtype == {"integer": np.int64, "complex": np.complex128}.get(_info["field"], np.float64)
    else:
        n, src, dst = expected
        want = sp.coo_matrix((np.ones(src.size), (src, dst)), shape=(n, n)).tocsr()
        want.data[:] = 1.0
        assert same_matrix(got, want), "differs from the reference reader"
    return "loaded"


class Tally:
    """Counts of inputs and outcomes, and the failures (first one of each message kept)."""

    def __init__(self, kind):
        self.kind = kind
        self.outcomes = collections.Counter()
        self.failures = []

    def run(self, folder: Path, name, data, text, label):
        try:
            self.outcomes[check_one(self.kind, folder, name, data, text)] += 1
        except AssertionError as exc:
            self.outcomes["FAILED"] += 1
            self.failures.append((label, str(exc).splitlines()[0][:300], name, data))
            if FAILURE_DIR:
                keep = Path(FAILURE_DIR)
                keep.mkdir(parents=True, exist_ok=True)
                (keep / f"{self.kind}-{label}-{name}").write_bytes(data)

    def report(self) -> str:
        total = sum(self.outcomes.values())
        kinds = collections.Counter(message.split(":")[0][:80] for _, message, _, _ in self.failures)
        text = f"fuzz {self.kind}: {total} inputs, " + ", ".join(f"{k} {v}" for k, v in sorted(self.outcomes.items()))
        if kinds:
            text += "\n  failure kinds: " + "; ".join(f"{v}x {k}" for k, v in kinds.most_common())
            for label, message, name, data in self.failures[:8]:
                text += f"\n  {label} {name}: {message}\n    input: {data[:200]!r}"
        return text


@pytest.mark.parametrize("kind", ["mtx", "snap"])
def test_mutation_corpus(kind, tmp_path):
    tally = Tally(kind)
    budget = FUZZ_SECONDS / 2 if FUZZ_SECONDS else None
    start = time.perf_counter()
    seed = FUZZ_SEED + (0 if kind == "mtx" else 10**7)
    with guarded():
        while (time.perf_counter() - start < budget) if budget else (sum(tally.outcomes.values()) < CI_CORPUS[kind]):
            name, data, text, applied = make_input(kind, seed)
            tally.run(tmp_path, name, data, text, f"seed{seed}[{'+'.join(applied) or 'valid'}]")
            seed += 1
    print("\n" + tally.report())
    assert not tally.failures, tally.report()
    # the corpus must exercise both sides of the property
    assert tally.outcomes["loaded"] > 0.1 * sum(tally.outcomes.values())
    assert tally.outcomes["refused"] > 0.1 * sum(tally.outcomes.values())


# ===================================================================== hypothesis
recipes = st.tuples(st.integers(0, 2**32 - 1),
                    st.lists(st.tuples(st.sampled_from(MUTATION_NAMES), st.integers(0, 2**32 - 1)), max_size=3),
                    st.booleans(), st.booleans())
FUZZ_SETTINGS = settings(max_examples=FUZZ_EXAMPLES or CI_EXAMPLES, derandomize=not FUZZ_EXAMPLES, deadline=None,
                         database=None, suppress_health_check=list(HealthCheck))


def _from_recipe(kind, recipe):
    base_seed, mutations, gz, damage = recipe
    rng = np.random.default_rng(base_seed)
    text, _ = (valid_mtx if kind == "mtx" else valid_snap)(rng)
    for name, seed in mutations:
        text = MUTATIONS[name](text, np.random.default_rng(seed))
    suffix = ".mtx" if kind == "mtx" else ".txt"
    if not gz:
        return f"h{suffix}", text, text
    data = gzip.compress(text, mtime=0)
    if damage:
        data = damage_gzip(data, np.random.default_rng(base_seed))
        try:
            text = gzip.decompress(data)
        except (OSError, EOFError, zlib.error):
            text = None
    return f"h{suffix}.gz", data, text


def _hypothesis_check(kind, recipe, folder):
    name, data, text = _from_recipe(kind, recipe)
    with guarded():
        check_one(kind, folder, name, data, text)


@FUZZ_SETTINGS
@given(recipe=recipes)
def test_hypothesis_mtx(recipe, tmp_path_factory):
    _hypothesis_check("mtx", recipe, tmp_path_factory.mktemp("h", numbered=True))


@FUZZ_SETTINGS
@given(recipe=recipes)
def test_hypothesis_snap(recipe, tmp_path_factory):
    _hypothesis_check("snap", recipe, tmp_path_factory.mktemp("h", numbered=True))


@FUZZ_SETTINGS
@given(body=st.binary(max_size=200), banner=st.sampled_from([
    b"%%MatrixMarket matrix coordinate real general\n", b"%%MatrixMarket matrix array integer symmetric\n",
    b"%%MatrixMarket matrix coordinate pattern symmetric\n", b"%%matrixmarket MATRIX Coordinate Real Skew-Symmetric\n",
    b""]))
def test_hypothesis_raw_bytes_mtx(body, banner, tmp_path_factory):
    folder = tmp_path_factory.mktemp("raw", numbered=True)
    with guarded():
        check_one("mtx", folder, "raw.mtx", banner + body, banner + body)


@FUZZ_SETTINGS
@given(body=st.binary(max_size=200))
def test_hypothesis_raw_bytes_snap(body, tmp_path_factory):
    folder = tmp_path_factory.mktemp("raw", numbered=True)
    with guarded():
        check_one("snap", folder, "raw.txt", body, body)


# ===================================================================== targeted regressions
def test_declared_entries_far_beyond_the_file_are_refused_without_allocating(tmp_path, monkeypatch):
    path = tmp_path / "lie.mtx"
    path.write_bytes(b"%%MatrixMarket matrix coordinate real general\n5 5 1000000000000\n1 1 1\n")
    with guarded():
        with pytest.raises(MatrixFormatError) as caught:
            mmio.read_mtx(path)
    assert caught.value.line == 2


# ===================================================================== issue 21: one case per class
HOSTILE = {
    # memory: declared sizes far beyond any budget, refused before allocating (one line)
    "tall and empty": b"%%MatrixMarket matrix coordinate real general\n500000000000 500000000000 1\n1 1 2.5\n",
    "huge array": b"%%MatrixMarket matrix array real general\n3000000 3000000\n1\n",
    # exact integers
    "past 2**53": b"%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 1 9007199254740993\n2 2 -1\n",
    "beyond int64": b"%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 9223372036854775808\n",
    "duplicates overflow": b"%%MatrixMarket matrix coordinate integer general\n1 1 2\n1 1 9223372036854775807\n"
                           b"1 1 1\n",
    "int64 minimum": b"%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 -9223372036854775808\n",
    # banners
    "bom": b"\xef\xbb\xbf%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1\n",
    "real hermitian": b"%%MatrixMarket matrix coordinate real hermitian\n2 2 2\n1 1 1\n2 1 3\n",
    "complex hermitian": b"%%MatrixMarket matrix coordinate complex hermitian\n2 2 2\n1 1 1 0\n2 1 3 -4\n",
    "complex array skew": b"%%MatrixMarket matrix array complex skew-symmetric\n2 2\n3 -4\n",
    "empty array, huge side": b"%%MatrixMarket matrix array real general\n0 4611686018427387904\n",
    "complex missing part": b"%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 3\n",
    # a megabyte token: the error quotes at most 60 characters of it
    "long token": b"%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 " + b"9" * (1 << 20) + b"x\n",
    "long banner word": b"%%MatrixMarket matrix coordinate real " + b"g" * (1 << 20) + b"\n1 1 1\n1 1 1\n",
}


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_cases_of_each_class(name, tmp_path):
    text = HOSTILE[name]
    with guarded():
        outcome = check_one("mtx", tmp_path, "m.mtx", text, text)
    assert outcome in ("loaded", "refused", "refused (no line)", "refused (memory)", "loaded (big)")
    try:
        mmio.read_mtx_scipy(tmp_path / "m.mtx")
    except (MatrixFormatError, HostMemoryError) as exc:
        assert len(str(exc)) < 400, f"{len(str(exc))}-character message"


def _npz_mutations(rng, path):
    """A valid SciPy or spla CSR .npz, then one hostile change to its members."""
    import spla

    n, m = int(rng.integers(1, 9)), int(rng.integers(1, 9))
    A = sp.random(n, m, density=0.4, format="csr", random_state=np.random.default_rng(rng.integers(1 << 30)))
    members = {"data": A.data, "indices": A.indices, "indptr": A.indptr, "shape": np.array(A.shape),
               "format": np.array("csr")}
    change = str(rng.choice(["none", "float indices", "float shape", "float indptr", "short indices",
                             "long data", "negative shape", "object", "2-d data", "huge declared",
                             "out of range", "decreasing indptr"]))
    if change == "float indices":
        members["indices"] = members["indices"] + (0.5 if rng.random() < 0.5 else 0.0)
    elif change == "float shape":
        members["shape"] = np.array(A.shape, dtype=np.float64) + 0.7
    elif change == "float indptr":
        members["indptr"] = members["indptr"].astype(np.float64)
    elif change == "short indices":
        members["indices"] = members["indices"][:-1]
    elif change == "long data":
        members["data"] = np.concatenate((members["data"], [1.0]))
    elif change == "negative shape":
        members["shape"] = np.array([-1, m])
    elif change == "object":
        members["data"] = np.array([object()] * A.nnz, dtype=object)
    elif change == "2-d data":
        members["data"] = members["data"].reshape(1, -1)
    elif change == "huge declared":
        members["data"] = np.zeros(3_000_000)  # 24 MB of zeros: a small archive that inflates
        members["indices"] = np.zeros(3_000_000, np.int32)
    elif change == "out of range":
        members["indices"] = members["indices"] + m
    elif change == "decreasing indptr":
        members["indptr"] = members["indptr"][::-1].copy()
    if A.nnz == 0 and change in ("short indices", "out of range", "decreasing indptr"):
        change = "none"  # nothing to change: still a valid empty matrix
    with open(path, "wb") as stream:
        (np.savez_compressed if rng.random() < 0.5 else np.savez)(stream, **members)
    return change, A, spla


def test_npz_mutation_corpus(tmp_path, monkeypatch):
    monkeypatch.setenv("SPLA_MEMORY_BUDGET", "16M")  # the inflating archives must be refused up front
    outcomes = collections.Counter()
    for seed in range(FUZZ_SEED, FUZZ_SEED + 300):
        rng = np.random.default_rng(seed)
        path = tmp_path / "m.npz"
        change, A, spla = _npz_mutations(rng, path)
        try:
            with guarded():
                got = spla.load(path).to_scipy()
        except (MatrixFormatError, HostMemoryError, spla.InputError) as exc:
            assert change != "none", f"seed {seed}: refused a valid file: {exc}"
            assert "\n" not in str(exc) and len(str(exc)) < 400, f"seed {seed}: {exc}"
            outcomes["refused " + change] += 1
            continue
        except Exception as exc:  # noqa: BLE001 - any other type is the failure being looked for
            raise AssertionError(f"seed {seed} ({change}): {type(exc).__name__}: {exc}") from exc
        assert change == "none", f"seed {seed}: loaded an archive with {change}"
        assert same_matrix(got, A), f"seed {seed}: differs"
        outcomes["loaded"] += 1
    print("npz:", dict(outcomes))
    assert outcomes["loaded"] > 0
