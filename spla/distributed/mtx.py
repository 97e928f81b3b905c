"""Read a Matrix Market file in parallel, so no rank ever holds the whole matrix.

Rank 0 parses the header (:func:`spla.io.mmio.read_header`); the body's bytes
are cut into one range per rank, and a line belongs to the rank whose range
holds its first byte. Each rank parses its lines (coordinate real, integer
or pattern; general or symmetric, mirrored locally), the entry count is
checked against the size line, a histogram of row lengths (one Allreduce)
gives the nnz-balanced row split, and one ``Alltoallv`` moves every entry to
the rank owning its row. Duplicate entries are summed, as :func:`spla.load`
does. Compressed files (.gz) cannot be cut by bytes: rank 0 reads them with
:func:`spla.load` and scatters.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError, MatrixFormatError
from .comm import Communicator
from .matrix import DistCSRMatrix, _make_comm, balanced_partition, normalize_partition


def _body_range(path: Path, body_offset: int, rank: int, size: int) -> bytes:
    """The text of the whole lines that start inside this rank's share of the body."""
    end_of_file = os.path.getsize(path)
    length = end_of_file - body_offset
    start = body_offset + (length * rank) // size
    stop = body_offset + (length * (rank + 1)) // size
    with open(path, "rb") as f:
        if start > body_offset:
            f.seek(start - 1)
            f.readline()  # the line running through `start` began in the previous range
        else:
            f.seek(start)
        begin = f.tell()
        if begin >= stop:
            return b""
        text = f.read(stop - begin)
        if not text.endswith(b"\n"):
            text += f.readline()
    return text


def _parse(text: bytes, header, path) -> tuple:
    """(rows, cols, values) 0-based from one range of body lines."""
    fields = header.fields_per_entry
    words = text.split()
    if len(words) % fields:
        raise MatrixFormatError(f"a body line in bytes of this range has the wrong number of fields "
                                f"(expected {fields} per entry)", path=path)
    try:
        table = np.array(words, dtype=np.float64).reshape(-1, fields)
    except ValueError as exc:
        raise MatrixFormatError(f"a body entry is not a number ({exc})", path=path) from None
    index = table[:, :2]
    if (index != np.floor(index)).any():
        raise MatrixFormatError("a row or column index is not an integer", path=path)
    rows = index[:, 0].astype(np.int64) - 1
    cols = index[:, 1].astype(np.int64) - 1
    if rows.size and (rows.min() < 0 or rows.max() >= header.n_rows or cols.min() < 0
                      or cols.max() >= header.n_cols):
        raise MatrixFormatError(f"an index is outside the {header.n_rows}x{header.n_cols} matrix", path=path)
    values = np.ones(rows.size) if fields == 2 else table[:, 2]
    if not np.isfinite(values).all():
        raise MatrixFormatError("the body holds NaN or Inf", path=path)
    return rows, cols, values


def read_mtx_distributed(path, comm=None, partition=None, *, dtype=None, device: str | None = None,
                         backend: str = "auto") -> DistCSRMatrix:
    """A :class:`DistCSRMatrix` from a Matrix Market file that every rank can read (a shared file system).

    Parameters
    ----------
    path : str or Path
        A coordinate file (real, integer or pattern; general or symmetric).
    comm, partition, dtype, device, backend
        As in :meth:`DistCSRMatrix.from_global` (partition: row offsets or
        block sizes; default balanced by ``nnz + rows``).

    Raises
    ------
    DistributedError
        On every rank, naming the file, when any rank finds it bad.
    """
    comm = _make_comm(comm, backend, device)
    path = Path(path)
    header: Any = None
    error = None
    if comm.rank == 0:
        try:
            if path.name.endswith(".gz"):
                header = "gz"
            else:
                from ..mmio import read_header

                with open(path, "rb") as stream:
                    header = read_header(stream, path)
                if header.format != "coordinate":
                    raise InputError(f"{path}: parallel reading takes coordinate files; this one is {header.format}")
                if header.symmetry not in ("general", "symmetric"):
                    raise InputError(f"{path}: parallel reading takes general or symmetric files, "
                                     f"not {header.symmetry}")
        except Exception as exc:  # noqa: BLE001 -- agreed below
            error = exc
    comm.agree(error, f"reading {path}")
    header = comm.bcast(header)
    if header == "gz":
        return _read_on_root(path, comm, partition, dtype)
    try:
        rows, cols, values = _parse(_body_range(path, header.body_offset, comm.rank, comm.size), header, path)
    except Exception as exc:  # noqa: BLE001 -- agreed below
        error = exc
        rows = cols = np.empty(0, dtype=np.int64)
        values = np.empty(0)
    comm.agree(error, f"reading {path}")
    found = int(comm.allreduce_array(np.array([rows.size], dtype=np.int64))[0])
    if found != header.declared_nnz:
        comm.agree(MatrixFormatError(f"the size line declares {header.declared_nnz} entries, the body holds "
                                     f"{found}", path=path) if comm.rank == 0 else None, f"reading {path}")
    if header.symmetry == "symmetric":
        mirror = rows != cols
        rows, cols, values = (np.concatenate((rows, cols[mirror])), np.concatenate((cols, rows[mirror])),
                              np.concatenate((values, values[mirror])))
    n_rows = header.n_rows
    if partition is None:
        lengths = comm.allreduce_array(np.bincount(rows, minlength=n_rows).astype(np.int64))
        row_offsets = balanced_partition(np.concatenate(([0], np.cumsum(lengths))), comm.size)
    else:
        try:
            row_offsets = normalize_partition(partition, n_rows, comm.size)
        except InputError as exc:
            error = exc
        comm.agree(error, f"reading {path}: partition")
    rows, cols, values = _to_owners(comm, row_offsets, rows, cols, values)
    import scipy.sparse as sp

    lo, hi = int(row_offsets[comm.rank]), int(row_offsets[comm.rank + 1])
    local = sp.coo_matrix((values, (rows - lo, cols)), shape=(hi - lo, header.n_cols)).tocsr()
    local.sum_duplicates()
    if dtype is not None or header.field == "pattern":
        local = local.astype(np.float64 if dtype is None else dtype)
    return DistCSRMatrix.from_row_blocks(local, comm, n_cols=header.n_cols)


def _to_owners(comm: Communicator, row_offsets, rows, cols, values):
    """Every entry moved to the rank that owns its row (one Alltoallv per array)."""
    owner = np.searchsorted(row_offsets, rows, side="right") - 1
    order = np.argsort(owner, kind="stable")
    rows, cols, values = rows[order], cols[order], values[order]
    send_counts = np.bincount(owner, minlength=comm.size).astype(np.int64)
    recv_counts = np.empty(comm.size, dtype=np.int64)
    comm.mpi.Alltoall(send_counts, recv_counts)
    send_displs = np.concatenate(([0], np.cumsum(send_counts)[:-1])).tolist()
    recv_displs = np.concatenate(([0], np.cumsum(recv_counts)[:-1])).tolist()
    total = int(recv_counts.sum())
    moved = []
    for array in (rows, cols, values):
        out = np.empty(total, dtype=array.dtype)
        comm.mpi.Alltoallv([np.ascontiguousarray(array), (send_counts.tolist(), send_displs)],
                           [out, (recv_counts.tolist(), recv_displs)])
        moved.append(out)
    return tuple(moved)


def _read_on_root(path: Path, comm: Communicator, partition, dtype) -> DistCSRMatrix:
    A, error = None, None
    if comm.rank == 0:
        try:
            from .. import load

            A = load(path, dtype=dtype, cache=False)
        except Exception as exc:  # noqa: BLE001 -- agreed below
            error = exc
    comm.agree(error, f"reading {path}")
    return DistCSRMatrix.from_global(A, comm, partition)
