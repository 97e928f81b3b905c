"""SNAP edge lists (``.txt``, ``.txt.gz``) as pattern matrices.

A SNAP file holds ``#`` comment lines and one edge ``src dst`` per line
(spaces or tabs). The matrix convention, which matches SuiteSparse's
conversions of the SNAP graphs (web-Google there has 916,428 rows):

- node ids are used as 0-based row/column indices as they stand, without
  renumbering, so the matrix is square with ``max id + 1`` rows; ids that
  never appear are empty rows and columns;
- edge ``src -> dst`` is the entry ``A[src, dst] = 1.0`` (row = source), so
  ``A @ x`` sums over each node's successors and ``A.T @ x`` over its
  predecessors (what PageRank needs);
- a repeated edge is stored once, with value 1.0 (duplicates are *merged*,
  not summed: ``load_info`` reports them as ``duplicates_merged``, and
  ``duplicates_summed`` is 0); self-loops are kept.

A UTF-8 byte-order mark at the start of the file is skipped. The memory the
matrix needs (its row pointer is sized by the largest id) is checked against
the host's budget before the CSR is built.

Parsing is NumPy's C integer reader over the whole body when the body holds
only digits and whitespace; anything else goes to a line-by-line scanner that
names the offending line.
"""

from __future__ import annotations

import gzip
import os
import warnings
import zlib
from pathlib import Path

import numpy as np

from ..errors import MatrixFormatError
from .memory import check_host_memory
from .mmio import BOM, show

_ALLOWED = b" \t\r\n0123456789"
MAX_NODE_ID = 2**62  # keeps max id + 1 and the CSR arrays far from int64 overflow


def _read_text(path: Path) -> bytes:
    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rb") as stream:
            return stream.read()
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise MatrixFormatError(f"corrupt .gz file: {exc}", path=path) from None


def max_node_id() -> int:
    """The largest id whose matrix's row pointer (8 bytes a row) fits in this machine's memory."""
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return MAX_NODE_ID
    return min(MAX_NODE_ID, memory // 8 - 2)


def _split_header(text: bytes):
    """Leading comment/blank lines, returned as (comment lines, body, body's first line number)."""
    comments, position, line_no = [], 0, 1
    while position < len(text):
        end = text.find(b"\n", position)
        end = len(text) if end < 0 else end + 1
        line = text[position:end].strip()
        if line and not line.startswith(b"#"):
            break
        if line:
            comments.append(line[1:].strip().decode("utf-8", "replace"))
        position, line_no = end, line_no + 1
    return comments, text[position:], line_no


def _fast_edges(body: bytes):
    """All ids as int64 when the body is plain "int int" lines; None when it needs the scanner."""
    if body.translate(None, _ALLOWED):
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NumPy warns (does not raise) when it stops early
        try:
            ids = np.fromstring(body, dtype=np.int64, sep=" ")
        except (ValueError, DeprecationWarning):
            return None
    stripped = body.rstrip()
    lines = stripped.count(b"\n") + 1 if stripped else 0
    # two ids per line on every line; blank lines or other widths go to the scanner
    if ids.size != 2 * lines or (ids.size and int(ids.max()) > max_node_id()):
        return None
    if not _two_per_line(stripped):  # "1 2 3\n4" holds four ids on two lines too
        return None
    return ids.reshape(-1, 2)


def _two_per_line(text: bytes) -> bool:
    """Whether each line of ``text`` (no trailing whitespace) holds exactly two tokens."""
    if not text:
        return True
    raw = np.frombuffer(text, np.uint8)
    is_space = raw <= 32
    starts = np.flatnonzero(~is_space[1:] & is_space[:-1]) + 1
    if not is_space[0]:
        starts = np.concatenate(([0], starts))
    newlines = np.flatnonzero(raw == ord("\n"))
    if starts.size != 2 * (newlines.size + 1):
        return False
    return not newlines.size or (bool(np.all(starts[1:-1:2] < newlines)) and bool(np.all(newlines < starts[2::2])))


def _scan_edges(body: bytes, first_line: int, path: Path):
    """Line-by-line parse naming the first bad line."""
    limit = max_node_id()
    pairs = []
    for line_no, raw in enumerate(body.split(b"\n"), start=first_line):
        line = raw.strip()
        if not line or line.startswith(b"#"):
            continue
        words = line.split()
        if len(words) != 2:
            raise MatrixFormatError(f"expected 2 fields (src dst), found {len(words)}: "
                                    f"{show(line)}", path=path, line=line_no)
        pair = []
        for word, name in zip(words, ("source", "destination")):
            text = word.decode("utf-8", "replace")
            if not text.isdigit() or not text.isascii():
                what = "negative" if text.startswith("-") and text[1:].isdigit() else "not a non-negative integer"
                raise MatrixFormatError(f"{name} node id {show(text)} is {what}", path=path, line=line_no)
            value = int(text)
            if value > limit:
                raise MatrixFormatError(f"{name} node id {value} is too large: ids are row numbers, and a "
                                        f"{value + 1}-row matrix's row pointer alone would need "
                                        f"{8 * (value + 2) / 2**30:.3g} GiB, more than this machine has",
                                        path=path, line=line_no)
            pair.append(value)
        pairs.append(pair)
    return np.asarray(pairs, dtype=np.int64).reshape(-1, 2)


def _first_line_with(path: Path, node: int) -> int | None:
    """The number of the first edge line naming ``node`` (read again: only for an error message)."""
    _, body, first_line = _split_header(_read_text(path))
    for line_no, raw in enumerate(body.split(b"\n"), start=first_line):
        if not raw.strip().startswith(b"#") and any(w.isdigit() and int(w) == node for w in raw.split()):
            return line_no
    return None


def read_snap(path, *, progress=None):
    """Read a SNAP edge list into a square pattern :class:`spla.CSRMatrix`.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.txt`` or ``.txt.gz`` edge list.
    progress : callable, optional
        Called as ``progress(stage, fraction)``.

    Returns
    -------
    A : CSRMatrix
        ``(max id + 1) x (max id + 1)``, float64 ones at ``[src, dst]``.
    info : dict
        ``format``, ``edges_in_file``, ``duplicates_merged`` (repeated edges
        stored once), ``duplicates_summed`` (always 0), ``parser`` and the
        header ``comments``.

    See Also
    --------
    networkx.read_edgelist, scipy.sparse.coo_matrix
    """
    import scipy.sparse as sp

    from ..csr import CSRMatrix

    path = Path(path)
    if progress:
        progress("reading", None)
    text = _read_text(path)
    if text.startswith(BOM):
        text = text[len(BOM):]
    comments, body, first_line = _split_header(text)
    del text
    if progress:
        progress("parsing", None)
    edges = _fast_edges(body)
    parser = "numpy.fromstring"
    if edges is None:
        edges = _scan_edges(body, first_line, path)
        parser = "spla line scanner"
    del body
    n = int(edges.max()) + 1 if edges.size else 0
    index = 4 if max(n, edges.shape[0]) < 2**31 else 8
    # COO (ids and ones), CSR (indices, ones, row pointer) alive together while it is built
    check_host_memory(edges.shape[0] * (8 + 2 * index + 8) + index * (n + 1),
                      f"{n:,} x {n:,} matrix of {path.name} (node ids are row numbers; the largest is {n - 1:,})")
    if progress:
        progress("building CSR", None)
    ones = np.ones(edges.shape[0], dtype=np.float64)
    try:
        csr = sp.coo_matrix((ones, (edges[:, 0], edges[:, 1])), shape=(n, n)).tocsr()
        csr.data[:] = 1.0  # a repeated edge is one edge
        A = CSRMatrix(csr.data, csr.indices, csr.indptr, csr.shape, validate=False)  # SciPy built it valid
    except MemoryError:
        line = _first_line_with(path, n - 1)
        raise MatrixFormatError(f"node id {n - 1} makes a {n} x {n} matrix, and there is not enough memory "
                                f"for its row pointer ({8 * (n + 1) / 2**30:.3g} GiB)", path=path, line=line) from None
    info = {
        "format": "snap edge list",
        "edges_in_file": int(edges.shape[0]),
        "duplicates_merged": int(edges.shape[0] - csr.nnz),
        "duplicates_summed": 0,
        "parser": parser,
        "comments": comments[:20],
    }
    return A, info
