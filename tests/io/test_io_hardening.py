"""Issue 21: memory estimates before allocating, exact integers, complex and Hermitian files,
byte-order marks and bounded error messages."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from spla import CSRMatrix, MatrixFormatError, analysis
from spla.io import generators, mmio

ROOT = Path(__file__).resolve().parents[2]


def run_limited(code: str, limit_bytes: int, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter whose address space is capped at import time + limit."""
    prelude = textwrap.dedent(f"""
        import resource, sys
        sys.path.insert(0, {str(ROOT)!r})
        import numpy, scipy.sparse, spla, spla.cli
        with open("/proc/self/status") as f:
            used = next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmSize:"))
        resource.setrlimit(resource.RLIMIT_AS, (used + {limit_bytes}, resource.RLIM_INFINITY))
    """)
    return subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=timeout)


def write(tmp_path, name, text) -> Path:
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


# ------------------------------------------------------------------ memory
def test_tall_nearly_empty_file_is_one_line_under_a_memory_limit(tmp_path):
    # 5e8 x 5e8 with one entry: its row pointer alone is 2 GB (int32) as in SciPy
    path = write(tmp_path, "tall.mtx", "%%MatrixMarket matrix coordinate real general\n500000000 500000000 1\n"
                                       "1 1 2.5\n")
    start = time.perf_counter()
    done = run_limited(f"""
        sys.argv = ["spla", "info", {str(path)!r}, "--no-cache"]
        spla.cli.main()
    """, 512 << 20)
    assert time.perf_counter() - start < 60
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert "GiB of host memory but only" in done.stderr and "ulimit -v" in done.stderr


@pytest.mark.parametrize("spec", ["gen:poisson2d:20000", "gen:poisson2d:100000", "gen:rmat:31:64"])
def test_oversized_generator_specs_are_refused_at_once(spec):
    start = time.perf_counter()
    done = run_limited(f"""
        sys.argv = ["spla", "info", {spec!r}]
        spla.cli.main()
    """, 2 << 30)
    assert time.perf_counter() - start < 30
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert spec in done.stderr and "GiB of host memory" in done.stderr


def test_generator_estimate_covers_what_it_builds():
    for spec in ("gen:poisson2d:60", "gen:poisson3d:12", "gen:banded:500:3", "gen:random:400:7",
                 "gen:powerlaw:3000:6", "gen:hugerows:2000:4:500", "gen:blockdense:2000:10:300:0.5",
                 "gen:rmat:10:8"):
        kind, args, _, _ = generators.parse_spec(spec)
        n_rows, nnz = generators.declared_size(kind.name, args)
        A = generators.from_spec(spec)
        assert A.n_rows == n_rows and A.nnz <= nnz, spec


def test_analysis_row_statistics_take_a_few_bytes_a_row(monkeypatch):
    n = 4_000_000
    indptr = np.zeros(n + 1, np.int64)
    indptr[n // 2 + 1:] = 1
    A = CSRMatrix(np.ones(1), np.zeros(1, np.int64), indptr, (n, n), index_dtype=np.int64)
    monkeypatch.setattr(analysis, "MAPPINGS", {k: analysis.MAPPINGS[k] for k in ("thread_per_row", "warp_per_row")})
    tracemalloc.start()
    try:
        result = analysis.analyze(A)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 6 * n + (16 << 20), f"{peak / n:.1f} bytes a row"
    assert result["row_length"]["empty_rows"] == n - 1 and result["row_length"]["max"] == 1


@pytest.mark.parametrize("seed", range(4))
def test_analysis_figures_match_a_direct_computation(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 3000))
    lengths = rng.integers(0, 50, size=n) * (rng.random(n) < 0.7)
    lengths[rng.integers(n)] = int(rng.integers(0, 5000))
    indptr = np.concatenate(([0], np.cumsum(lengths)))
    cols = n + 5000
    A = CSRMatrix(np.ones(indptr[-1]), rng.integers(0, cols, indptr[-1]), indptr, (n, cols))
    got = analysis.analyze(A)
    assert got["row_length"]["std"] == pytest.approx(float(lengths.std()), rel=1e-12, abs=1e-12)
    assert got["row_length"]["median"] == float(np.median(lengths))
    warps = -(-n // 32)
    padded = np.zeros(warps * 32, np.int64)
    padded[:n] = lengths
    work = padded.reshape(warps, 32).max(axis=1)
    thread = got["mappings"]["thread_per_row"]
    assert thread["max_work"] == work.max() and thread["mean_work"] == pytest.approx(work.mean())
    blocks = -(-n // 8)
    steps = np.zeros(blocks * 8, np.int64)
    steps[:n] = -(-lengths // 32)
    block_work = steps.reshape(blocks, 8).sum(axis=1)
    warp = got["mappings"]["warp_per_row"]
    assert warp["max_work"] == block_work.max() and warp["mean_work"] == pytest.approx(block_work.mean())


# ------------------------------------------------------------------ exact integers
def test_integers_past_2_53_are_exact_or_refused(tmp_path):
    path = write(tmp_path, "big.mtx", "%%MatrixMarket matrix coordinate integer general\n2 2 2\n"
                                      "1 1 9007199254740993\n2 2 -5\n")
    csr, info = mmio.read_mtx_scipy(path)
    assert csr.dtype == np.int64 and csr[0, 0] == 2**53 + 1
    expected = scipy.io.mmread(str(path)).tocsr()
    assert (csr != expected).nnz == 0
    try:
        A, _ = mmio.read_mtx(path)
    except MatrixFormatError as exc:  # CSRMatrix without int64 values: refused, never rounded
        assert "9007199254740993" in str(exc) and "exactly" in str(exc)
    else:
        assert A.dtype == np.int64 and int(A.data[0]) == 2**53 + 1


def test_integers_beyond_int64_are_refused_like_scipy(tmp_path):
    path = write(tmp_path, "huge.mtx", "%%MatrixMarket matrix coordinate integer general\n2 2 1\n"
                                       "1 1 92233720368547758070\n")
    with pytest.raises(MatrixFormatError, match="beyond int64"):
        mmio.read_mtx_scipy(path)
    with pytest.raises((OverflowError, ValueError)):
        scipy.io.mmread(str(path))


def test_duplicate_integer_sums_that_overflow_are_refused(tmp_path):
    big = 2**62 + 7
    path = write(tmp_path, "dup.mtx", f"%%MatrixMarket matrix coordinate integer general\n1 1 2\n1 1 {big}\n"
                                      f"1 1 {big}\n")
    with pytest.raises(MatrixFormatError, match="overflows int64"):
        mmio.read_mtx_scipy(path)


# ------------------------------------------------------------------ complex, Hermitian, BOM
COMPLEX_FILES = {
    "coordinate hermitian": "%%MatrixMarket matrix coordinate complex hermitian\n3 3 3\n1 1 2.5 0\n3 1 4 1\n"
                            "2 2 -1 0\n",
    "coordinate general": "%%MatrixMarket matrix coordinate complex general\n2 3 2\n1 3 1 -2\n2 1 0.5 7e-3\n",
    "coordinate skew": "%%MatrixMarket matrix coordinate complex skew-symmetric\n2 2 1\n2 1 1 2\n",
    "array hermitian": "%%MatrixMarket matrix array complex hermitian\n2 2\n1 0\n3 4\n5 0\n",
    "array general": "%%MatrixMarket matrix array complex general\n2 1\n1 2\n3 4\n",
}


@pytest.mark.parametrize("name", COMPLEX_FILES)
def test_complex_files_load_as_complex128_like_scipy(tmp_path, name):
    path = write(tmp_path, "c.mtx", COMPLEX_FILES[name])
    csr, info = mmio.read_mtx_scipy(path)
    assert csr.dtype == np.complex128
    np.testing.assert_array_equal(csr.toarray(), sp.csr_matrix(scipy.io.mmread(str(path))).toarray())
    try:
        A, _ = mmio.read_mtx(path)
    except Exception as exc:  # noqa: BLE001 - CSRMatrix without complex support refuses in its own words
        assert "complex" in str(exc)
    else:
        assert A.dtype == np.complex128


def test_real_hermitian_is_symmetric(tmp_path):
    path = write(tmp_path, "rh.mtx", "%%MatrixMarket matrix coordinate real hermitian\n3 3 2\n1 1 2.5\n3 1 4\n")
    A, info = mmio.read_mtx(path)
    want = np.array([[2.5, 0, 4], [0, 0, 0], [4, 0, 0]])
    np.testing.assert_array_equal(A.to_scipy().toarray(), want)
    assert info["symmetry"] == "symmetric" and "hermitian" in info["note"]


def test_utf8_byte_order_mark_is_skipped(tmp_path):
    text = "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 2.5\n2 1 -1\n"
    A, info = mmio.read_mtx(write(tmp_path, "bom.mtx", b"\xef\xbb\xbf" + text.encode()))
    B, _ = mmio.read_mtx(write(tmp_path, "plain.mtx", text))
    assert (A.to_scipy() != B.to_scipy()).nnz == 0 and "byte-order mark" in info["note"]


# ------------------------------------------------------------------ bounded messages
@pytest.mark.parametrize("where", ["value", "index", "field count", "banner"])
def test_a_megabyte_token_is_cut_in_the_error(tmp_path, where):
    token = "x" * (1 << 20)
    body = {"value": f"1 1 {token}\n", "index": f"1{token} 1 1\n", "field count": f"1 1 1 {token}\n",
            "banner": ""}[where]
    banner = f"%%MatrixMarket matrix coordinate real {token}\n" if where == "banner" else \
        "%%MatrixMarket matrix coordinate real general\n"
    path = write(tmp_path, "t.mtx", banner + "2 2 1\n" + body)
    with pytest.raises(MatrixFormatError) as caught:
        mmio.read_mtx(path)
    message = str(caught.value)
    assert len(message) < 400 and "\n" not in message, message[:500]


# ------------------------------------------------------------------ sources that are not files
@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_non_regular_sources_are_refused_without_opening(tmp_path, kind):
    import os

    import spla

    if kind == "fifo":
        path = tmp_path / "pipe.mtx"
        os.mkfifo(path)  # opening it for reading would block forever
    elif kind == "device":
        path = Path("/dev/null")
    else:
        path = tmp_path / "folder.mtx"
        path.mkdir()
    start = time.perf_counter()
    with pytest.raises(spla.InputError, match="FIFO|device|folder"):
        spla.load(path)
    assert time.perf_counter() - start < 5


# ------------------------------------------------------------------ .npz files
def _scipy_npz(path, **members):
    with open(path, "wb") as stream:
        np.savez(stream, format=np.array("csr"), **members)
    return path


def test_npz_with_fractional_indices_or_float_shape_is_refused(tmp_path):
    import spla

    good = dict(data=np.ones(2), indices=np.array([0, 1]), indptr=np.array([0, 1, 2]), shape=np.array([2, 2]))
    assert spla.load(_scipy_npz(tmp_path / "ok.npz", **good)).nnz == 2
    for change in {"fractional indices": {"indices": np.array([0.0, 1.5])},
                         "float indptr": {"indptr": np.array([0.0, 1.0, 2.0])},
                         "float shape": {"shape": np.array([1.7, 1.2])}}.values():
        path = _scipy_npz(tmp_path / "bad.npz", **{**good, **change})
        with pytest.raises(MatrixFormatError, match="integers"):
            spla.load(path)


def test_npz_zip_bomb_is_refused_before_decompressing(tmp_path, monkeypatch):
    import zipfile

    import spla

    n = 25_000_000  # 200 MB of zeros deflate to ~200 KB
    path = tmp_path / "bomb.npz"
    np.savez_compressed(path, format=np.array("csr"), data=np.zeros(n), indices=np.zeros(3, np.int32),
                        indptr=np.array([0, 3], np.int32), shape=np.array([1, 4]))
    assert path.stat().st_size < 1 << 20 and sum(i.file_size for i in zipfile.ZipFile(path).infolist()) > 1e8
    tracemalloc.start()
    try:
        with pytest.raises(MatrixFormatError, match="data declares 25,000,000 entries but indices 3"):
            spla.load(path)
        assert tracemalloc.get_traced_memory()[1] < 20 << 20  # nothing near 200 MB was inflated
        np.savez_compressed(path, format=np.array("csr"), data=np.zeros(n), indices=np.zeros(n, np.int32),
                            indptr=np.array([0, n], np.int32), shape=np.array([1, 4]))
        tracemalloc.reset_peak()
        monkeypatch.setenv("SPLA_MEMORY_BUDGET", "64M")
        with pytest.raises(spla.SplaError, match="GiB of host memory"):
            spla.load(path)
        assert tracemalloc.get_traced_memory()[1] < 20 << 20
    finally:
        tracemalloc.stop()


# ------------------------------------------------------------------ the cache
def test_cache_misses_an_edit_that_restores_size_and_mtime(tmp_path):
    import os

    import spla
    from spla.io import load_info

    path = tmp_path / "m.mtx"
    path.write_text("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1.5\n")
    assert spla.load(path).to_scipy()[0, 0] == 1.5
    before = path.stat()
    path.write_text("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 2.5\n")  # same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # as touch -r / cp -p / rsync -t do
    assert path.stat().st_size == before.st_size and path.stat().st_mtime_ns == before.st_mtime_ns
    again = spla.load(path)
    assert not load_info(again)["cache_hit"] and again.to_scipy()[0, 0] == 2.5


def test_stale_temporaries_are_removed_and_fresh_ones_kept(tmp_path):
    import os

    import spla

    path = tmp_path / "m.mtx"
    path.write_text("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1.5\n")
    stale = tmp_path / ".m.mtx.spla.npz.k1ll3d.tmp"
    fresh = tmp_path / ".m.mtx.spla.npz.wr1t1ng.tmp"
    stale.write_bytes(b"PK half")
    fresh.write_bytes(b"PK half")
    old = time.time() - 2 * 3600
    os.utime(stale, (old, old))
    spla.load(path)
    assert not stale.exists() and fresh.exists()


def test_cached_load_is_memory_mapped_and_much_faster_than_scipy(tmp_path, rng):
    import spla
    from spla.io import load_info

    n, nnz = 200_000, 1_000_000
    A = sp.coo_matrix((rng.standard_normal(nnz), (rng.integers(0, n, nnz), rng.integers(0, n, nnz))), shape=(n, n))
    path = tmp_path / "m.mtx"
    mmio.write_mtx(path, A)
    first = spla.load(path)

    def best(fn):
        times = []
        for _ in range(3):
            start = time.perf_counter()
            value = fn()
            times.append(time.perf_counter() - start)
        return min(times), value

    cached_s, cached = best(lambda: spla.load(path))
    scipy_s, _ = best(lambda: scipy.io.mmread(path).tocsr())
    assert load_info(cached)["cache_hit"]
    base = cached.indices
    while base is not None and not isinstance(base, np.memmap):
        base = getattr(base, "base", None)
    assert isinstance(base, np.memmap), "the cached arrays are read, not mapped"
    np.testing.assert_array_equal(cached.data, first.data)
    cached.data[0] = 7.0  # copy-on-write: the matrix is the caller's, the cache file is untouched
    assert spla.load(path).data[0] == first.data[0]
    assert cached_s * 5 < scipy_s, f"cached {cached_s:.3f} s vs scipy {scipy_s:.3f} s"


# ------------------------------------------------------------------ NaN in a product
def test_nan_in_the_matrix_is_reported_not_hidden(rng):
    import warnings

    from spla.io.values import compare_nonfinite, nonfinite_counts

    M = sp.random(50, 40, density=0.2, format="csr", random_state=np.random.default_rng(rng.integers(1 << 30)))
    M.data[3] = np.nan
    M.data[7] = np.inf
    x = rng.standard_normal(40)
    reference = M @ x
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning may escape
        same = compare_nonfinite(reference.copy(), reference)
        wrong = reference.copy()
        wrong[~np.isfinite(wrong)] = 0.0  # a kernel that lost the NaN
        lost = compare_nonfinite(wrong, reference)
        clean = compare_nonfinite(np.ones(4), np.ones(4))
    assert same["status"] == "propagated" and same["error"] == 0.0
    assert same["nonfinite"] == int(np.count_nonzero(~np.isfinite(reference))) > 0
    assert lost["status"] == "mismatch" and lost["mismatched"] == same["nonfinite"]
    assert clean["status"] == "finite"
    assert nonfinite_counts(M.data) == {"nan": 1, "inf": 1}


# ------------------------------------------------------------------ spla generate --out
def test_generate_writes_only_what_reads_back(tmp_path):
    from click.testing import CliRunner

    import spla
    from spla.cli import main

    refused = CliRunner().invoke(main, ["generate", "poisson2d", "6", "--out", str(tmp_path / "p.txt")])
    assert refused.exit_code == 2 and "SNAP" in refused.output and not (tmp_path / "p.txt").exists()
    reference = generators.from_spec("gen:poisson2d:6").to_scipy()
    for name in ("p.mtx", "p.mtx.gz", "p.npz"):
        done = CliRunner().invoke(main, ["generate", "poisson2d", "6", "--out", str(tmp_path / name)])
        assert done.exit_code == 0, done.output
        back = spla.load(tmp_path / name, cache=False).to_scipy()
        assert (back != reference).nnz == 0, name


def test_cli_turns_an_unforeseen_host_memory_error_into_one_line(monkeypatch):
    from click.testing import CliRunner

    import spla.io
    from spla.cli import main

    def exhausted(*args, **kwargs):
        raise MemoryError("Unable to allocate 7.45 EiB for an array with shape (10**18,) and data type int64")

    monkeypatch.setattr(spla.io, "load", exhausted)
    result = CliRunner().invoke(main, ["info", "gen:weblike"])
    assert result.exit_code == 1 and "out of host memory" in result.output
    assert "Traceback" not in result.output and result.output.count("\n") == 1


# ------------------------------------------------------------------ plots
def test_plots_are_world_readable_under_the_usual_umask(tmp_path):
    import os
    import stat

    pytest.importorskip("matplotlib")
    from spla import plots

    previous = os.umask(0o022)
    try:
        path = plots.spy(generators.from_spec("gen:poisson2d:20"), tmp_path / "spy.png")
    finally:
        os.umask(previous)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_spy_row_label_fits_beside_six_digit_ticks(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from spla import plots

    figures = []
    real_save = plots._save
    monkeypatch.setattr(plots, "_save", lambda fig, path: figures.append(fig) or real_save(fig, path))
    plots.spy(generators.from_spec("gen:banded:900000:1"), tmp_path / "spy.png")
    fig = figures[0]
    fig.canvas.draw()
    ax = fig.axes[0]
    label = ax.yaxis.label.get_window_extent()
    ticks = [t.get_window_extent() for t in ax.get_yticklabels() if t.get_text()]
    assert max(len(t.get_text().replace(",", "")) for t in ax.get_yticklabels()) >= 6
    assert label.x0 >= 0, f"row label starts {label.x0:.0f} px outside the image"
    assert not any(label.overlaps(t) for t in ticks), "row label overlaps the tick labels"
    columns = sorted((t.get_window_extent() for t in ax.get_xticklabels() if t.get_text()), key=lambda b: b.x0)
    assert all(a.x1 <= b.x0 for a, b in zip(columns, columns[1:])), "column tick labels overlap"


# ------------------------------------------------------------------ the old module names
@pytest.mark.parametrize("name", ["mmio", "snap", "generators", "catalog", "fetch", "cache"])
def test_old_module_names_are_deprecated_aliases(name):
    import importlib
    import warnings

    sys.modules.pop(f"spla.{name}", None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = importlib.import_module(f"spla.{name}")
    new = importlib.import_module(f"spla.io.{name}")
    assert any(issubclass(w.category, DeprecationWarning) and f"spla.io.{name}" in str(w.message) for w in caught)
    assert "Deprecated" in old.__doc__
    public = [n for n in dir(new) if not n.startswith("_") and callable(getattr(new, n))]
    assert public and all(getattr(old, n) is getattr(new, n) for n in public)
