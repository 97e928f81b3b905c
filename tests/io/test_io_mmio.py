"""Matrix Market reading and writing against scipy.io / scipy.sparse."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from spla import MatrixFormatError
from spla.errors import HostMemoryError
from spla.io import mmio

BANNER = "%%MatrixMarket matrix coordinate real general\n"


def write(tmp_path, name, text):
    path = tmp_path / name
    if name.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


def dense_of(path):
    A, info = mmio.read_mtx(path)
    return A.to_scipy().toarray(), info


def scipy_dense(path):
    M = scipy.io.mmread(path)
    return M.toarray() if sp.issparse(M) else np.asarray(M)


# --------------------------------------------------------------- written by SciPy
def random_sparse(rng, shape, density=0.3):
    return sp.random(*shape, density=density, format="coo", random_state=rng, dtype=np.float64)


# the format has no skew-symmetric pattern matrices
VARIANTS = [(f, s) for f in ("real", "integer", "pattern") for s in ("general", "symmetric", "skew-symmetric")
            if (f, s) != ("pattern", "skew-symmetric")]


@pytest.mark.parametrize("field, symmetry", VARIANTS, ids=[f"{f}-{s}" for f, s in VARIANTS])
@pytest.mark.parametrize("gz", [False, True], ids=["mtx", "mtx.gz"])
def test_scipy_written_coordinate(tmp_path, rng, symmetry, field, gz):
    M = random_sparse(rng, (9, 9)).toarray()
    if field == "integer":
        M = np.round(M * 100)
    if field == "pattern":
        M = (M != 0).astype(float)
    if symmetry == "symmetric":
        M = np.tril(M) + np.tril(M, -1).T
    elif symmetry == "skew-symmetric":
        M = np.tril(M, -1) - np.tril(M, -1).T
    path = tmp_path / "m.mtx"
    scipy.io.mmwrite(path, sp.coo_matrix(M), field=field, symmetry=symmetry)
    assert symmetry in path.read_text().splitlines()[0]
    if gz:
        gz_path = tmp_path / "m.mtx.gz"
        gz_path.write_bytes(gzip.compress(path.read_bytes()))
        path = gz_path
    got, info = dense_of(path)
    np.testing.assert_array_equal(got, scipy_dense(path))
    np.testing.assert_array_equal(got, M)
    assert info["symmetry"] == symmetry and info["field"] == field


@pytest.mark.parametrize("symmetry", ["general", "symmetric"])
def test_scipy_written_array(tmp_path, rng, symmetry):
    M = rng.standard_normal((5, 5) if symmetry == "symmetric" else (4, 6))
    if symmetry == "symmetric":
        M = M + M.T
    M[0, 1 if symmetry == "general" else 0] = 0.0  # a stored zero is dropped
    path = tmp_path / "a.mtx"
    scipy.io.mmwrite(path, M, symmetry=symmetry)
    assert "array" in path.read_text().splitlines()[0]
    got, info = dense_of(path)
    np.testing.assert_array_equal(got, M)
    assert info["format"] == "matrix market array"


def test_large_random_against_scipy(tmp_path, rng):
    A = random_sparse(rng, (300, 200), density=0.05)
    path = tmp_path / "r.mtx"
    scipy.io.mmwrite(path, A)
    got, info = mmio.read_mtx(path)
    ref = scipy.io.mmread(path).tocsr()
    assert got.shape == ref.shape and got.nnz == ref.nnz
    np.testing.assert_array_equal(got.indptr, ref.indptr)
    np.testing.assert_array_equal(got.indices, ref.indices)
    np.testing.assert_array_equal(got.data, ref.data)
    assert "fast_matrix_market" in info["parser"]


# --------------------------------------------------------------- written by hand
def test_hand_symmetric_expands_without_doubling_diagonal(tmp_path):
    path = write(tmp_path, "s.mtx", "%%MatrixMarket matrix coordinate real symmetric\n% a comment\n"
                                    "3 3 3\n1 1 2.0\n3 1 -1.5\n2 2 4\n")
    got, info = dense_of(path)
    np.testing.assert_array_equal(got, [[2, 0, -1.5], [0, 4, 0], [-1.5, 0, 0]])
    assert info["comments"] == ["a comment"]


def test_hand_skew_symmetric(tmp_path):
    path = write(tmp_path, "k.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 5\n3 2 -1\n")
    got, _ = dense_of(path)
    np.testing.assert_array_equal(got, [[0, -5, 0], [5, 0, 1], [0, -1, 0]])


def test_hand_array_is_column_major(tmp_path):
    path = write(tmp_path, "a.mtx", "%%MatrixMarket matrix array real general\n2 3\n1\n2\n3\n4\n5\n6\n")
    got, _ = dense_of(path)
    np.testing.assert_array_equal(got, [[1, 3, 5], [2, 4, 6]])


def test_hand_skew_array(tmp_path):
    path = write(tmp_path, "a.mtx", "%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n")
    got, _ = dense_of(path)
    np.testing.assert_array_equal(got, [[0, -1, -2], [1, 0, -3], [2, 3, 0]])


def test_hand_pattern_and_integer(tmp_path):
    pattern = write(tmp_path, "p.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 3 2\n1 3\n2 1\n")
    got, _ = dense_of(pattern)
    np.testing.assert_array_equal(got, [[0, 0, 1], [1, 0, 0]])
    integer = write(tmp_path, "i.mtx", "%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 1 -7\n2 2 3\n")
    got, _ = dense_of(integer)
    np.testing.assert_array_equal(got, [[-7, 0], [0, 3]])


def test_case_insensitive_banner_crlf_and_comments_between_entries(tmp_path):
    path = tmp_path / "c.mtx"
    path.write_bytes(b"%%matrixmarket MATRIX Coordinate REAL General\r\n2 2 2\r\n1 1 1.5\r\n"
                     b"% between entries\r\n2 2 2.5\r\n")
    got, _ = dense_of(path)
    np.testing.assert_array_equal(got, [[1.5, 0], [0, 2.5]])


def test_duplicates_summed_and_counted(tmp_path):
    path = write(tmp_path, "d.mtx", BANNER + "2 2 4\n1 1 1\n1 1 2.5\n2 1 1\n1 1 -1\n")
    A, info = mmio.read_mtx(path)
    assert info["duplicates_summed"] == 2
    assert A.nnz == 2
    np.testing.assert_array_equal(A.to_scipy().toarray(), scipy_dense(path))


def test_explicit_zero_kept(tmp_path):
    path = write(tmp_path, "z.mtx", BANNER + "2 2 2\n1 1 0\n2 2 1\n")
    A, _ = mmio.read_mtx(path)
    assert A.nnz == 2 and A.data[0] == 0


def test_nan_and_inf_are_loaded(tmp_path):
    path = write(tmp_path, "n.mtx", BANNER + "3 3 4\n1 1 nan\n2 2 Inf\n3 3 -Infinity\n3 1 NaN\n")
    A, _ = mmio.read_mtx(path)
    got = A.to_scipy().toarray()
    assert np.isnan(got[0, 0]) and np.isnan(got[2, 0])
    assert got[1, 1] == np.inf and got[2, 2] == -np.inf


@pytest.mark.parametrize("text, shape, nnz", [
    ("0 0 0\n", (0, 0), 0),
    ("4 3 0\n", (4, 3), 0),
    ("1 1 1\n1 1 3.5\n", (1, 1), 1),
    ("2 5 2\n1 5 1\n2 1 2\n", (2, 5), 2),
    ("5 1 2\n1 1 1\n5 1 2\n", (5, 1), 2),
    ("6 6 1\n6 6 1\n", (6, 6), 1),  # rows 1..5 all empty
])
def test_small_shapes(tmp_path, text, shape, nnz):
    path = write(tmp_path, "s.mtx", BANNER + text)
    A, _ = mmio.read_mtx(path)
    assert A.shape == shape and A.nnz == nnz
    np.testing.assert_array_equal(A.to_scipy().toarray(), scipy_dense(path))


# --------------------------------------------------------------- bad input
BAD = {
    "truncated": (BANNER + "3 3 3\n1 1 1\n2 2 2\n", 5, "truncated"),
    "extra entry": (BANNER + "3 3 1\n1 1 1\n2 2 2\n", 4, "more entries"),
    "wrong banner": ("%%MatrixMarkt matrix coordinate real general\n1 1 1\n1 1 1\n", 1, "not a Matrix Market"),
    "no banner": ("1 1 1\n1 1 1\n", 1, "not a Matrix Market"),
    "short banner": ("%%MatrixMarket matrix coordinate real\n1 1 1\n1 1 1\n", 1, "banner"),
    "vector object": ("%%MatrixMarket vector coordinate real general\n1 1 1\n1 1 1\n", 1, "matrix"),
    "unknown field": ("%%MatrixMarket matrix coordinate quaternion general\n1 1 1\n1 1 1\n", 1, "field"),
    "complex value missing": ("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1\n", 3,
                              "expected 4 fields"),
    "bad size line": (BANNER + "3 x 1\n1 1 1\n", 2, "size line"),
    "size line missing count": (BANNER + "% c\n3 3\n1 1 1\n", 3, "size line"),
    "negative size": (BANNER + "-3 3 1\n1 1 1\n", 2, "negative"),
    "no size line": (BANNER + "% only comments\n", 3, "before the size line"),
    "row out of range": (BANNER + "3 3 2\n1 1 1\n4 2 2\n", 4, "row index 4 is out of range 1..3"),
    "column out of range": (BANNER + "3 3 2\n1 1 1\n3 9 2\n", 4, "column index 9 is out of range"),
    "zero index": (BANNER + "3 3 1\n0 1 1\n", 3, "row index 0 is out of range"),
    "negative index": (BANNER + "3 3 1\n2 -1 1\n", 3, "column index -1"),
    "non-numeric value": (BANNER + "3 3 2\n1 1 1\n2 2 abc\n", 4, "'abc' is not a number"),
    "non-numeric index": (BANNER + "3 3 1\n1 x 1\n", 3, "column index 'x' is not an integer"),
    "trailing garbage": (BANNER + "3 3 1\n1 1 1.5abc\n", 3, "not a number"),
    "fractional index": (BANNER + "3 3 1\n1.5 1 1\n", 3, "not an integer"),
    "missing value": (BANNER + "3 3 2\n1 1\n2 2 1\n", 3, "expected 3 fields"),
    "extra field": (BANNER + "3 3 2\n1 1 1 0\n2 2 1\n", 3, "expected 3 fields"),
    "value in pattern file": ("%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1 5\n", 3,
                              "expected 2 fields"),
    "fraction in integer file": ("%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 1.5\n", 3,
                                 "not an integer"),
    "skew diagonal": ("%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 1\n2 2 1\n", 3, "zero diagonal"),
    "symmetric not square": ("%%MatrixMarket matrix coordinate real symmetric\n3 4 1\n1 1 1\n", 2, "square"),
    "array truncated": ("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n", 6, "truncated"),
    "huge declared nnz": (BANNER + "10 10 1000000000000\n" + "1 1 1\n" * 8, 2, "declares 1000000000000 entries"),
}


@pytest.mark.parametrize("name", list(BAD))
@pytest.mark.parametrize("gz", [False, True], ids=["mtx", "mtx.gz"])
def test_bad_input_names_file_and_line(tmp_path, name, gz):
    text, line, words = BAD[name]
    path = write(tmp_path, "bad.mtx.gz" if gz else "bad.mtx", text)
    with pytest.raises(MatrixFormatError) as caught:
        mmio.read_mtx(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:{line}: "), message
    assert words in message
    assert "\n" not in message
    assert caught.value.line == line and caught.value.path == str(path)


def test_huge_declared_nnz_in_gz_is_refused_before_allocating(tmp_path, monkeypatch):
    path = write(tmp_path, "big.mtx.gz", BANNER + "10 10 1000000000000\n" + "1 1 1\n" * 8)
    monkeypatch.setattr(np, "empty", lambda *a, **k: pytest.fail("allocated"))
    with pytest.raises(MatrixFormatError, match="at most"):
        mmio.read_mtx(path)


def test_huge_row_count_is_refused(tmp_path):
    path = write(tmp_path, "rows.mtx", BANNER + f"{10**18} 1 1\n1 1 1\n")
    with pytest.raises(HostMemoryError, match=r"rows.mtx:2 declares needs about .* GiB .* available"):
        mmio.read_mtx(path)


def test_corrupt_gzip(tmp_path):
    path = tmp_path / "c.mtx.gz"
    path.write_bytes(gzip.compress((BANNER + "2 2 1\n1 1 1\n").encode())[:-12])
    with pytest.raises(MatrixFormatError, match=str(path)):
        mmio.read_mtx(path)


# --------------------------------------------------------------- writer
@pytest.mark.parametrize("name", ["w.mtx", "w.mtx.gz"])
def test_write_round_trip_exact(tmp_path, rng, name):
    A = random_sparse(rng, (40, 30), density=0.2).tocsr()
    A.data = rng.standard_normal(A.nnz) * 10.0 ** rng.integers(-300, 300, A.nnz)
    path = mmio.write_mtx(tmp_path / name, A, comment="made by a test")
    back, info = mmio.read_mtx(path)
    assert info["symmetry"] == "general" and info["field"] == "real"
    assert info["comments"] == ["made by a test"]
    np.testing.assert_array_equal(back.to_scipy().toarray(), A.toarray())  # repr precision: bit-exact
    ref = scipy.io.mmread(path)
    np.testing.assert_array_equal(ref.toarray(), A.toarray())


def test_write_is_atomic(tmp_path, monkeypatch, rng):
    target = tmp_path / "keep.mtx"
    target.write_text("old content")

    def fail(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(mmio, "_write_coordinate", fail)
    with pytest.raises(KeyboardInterrupt):
        mmio.write_mtx(target, random_sparse(rng, (5, 5)))
    assert target.read_text() == "old content"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.mtx"]


def test_numpy_writer_round_trip(tmp_path, rng):
    """The writer used with SciPy < 1.12 gives the same values."""
    import io as stdlib_io

    A = random_sparse(rng, (8, 8)).tocoo()
    stream = stdlib_io.BytesIO()
    mmio._write_coordinate_numpy(stream, A, "c")
    path = tmp_path / "n.mtx"
    path.write_bytes(stream.getvalue())
    np.testing.assert_array_equal(dense_of(path)[0], A.toarray())


def test_line_scanner_matches_fast_reader(tmp_path, rng):
    """The fallback parser (used when the fast path refuses a file) gives the same matrix."""
    for symmetry in ("general", "symmetric", "skew-symmetric"):
        M = random_sparse(rng, (12, 12)).toarray()
        if symmetry != "general":
            M = np.tril(M, -1 if symmetry == "skew-symmetric" else 0)
            M = M + (M.T if symmetry == "symmetric" else -M.T) - (np.diag(np.diag(M)) if symmetry == "symmetric"
                                                                   else 0)
        path = tmp_path / f"{symmetry}.mtx"
        scipy.io.mmwrite(path, sp.coo_matrix(M), symmetry=symmetry)
        with open(path, "rb") as stream:
            header = mmio.read_header(stream, path)
        rows, cols, values = mmio._scan(path, header, None)
        scanned = sp.coo_matrix((values, (rows, cols)), shape=M.shape).toarray()
        np.testing.assert_array_equal(scanned, M)


def test_real_suitesparse_matrices_match_scipy(shared_matrices):
    """Every real matrix in the shared folder, bit for bit against scipy.io.mmread + tocsr."""
    files = sorted(shared_matrices.glob("*.mtx.gz"))
    for path in files:
        A, info = mmio.read_mtx(path)  # read_mtx itself never writes a cache into the shared folder
        ref = scipy.io.mmread(path).tocsr()
        ref.sort_indices()
        assert A.shape == ref.shape and A.nnz == ref.nnz, path.name
        np.testing.assert_array_equal(A.indptr, ref.indptr, err_msg=path.name)
        np.testing.assert_array_equal(A.indices, ref.indices, err_msg=path.name)
        np.testing.assert_array_equal(A.data, ref.data.astype(np.float64), err_msg=path.name)
        assert info["duplicates_summed"] == 0, path.name
