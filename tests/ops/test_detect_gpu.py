"""dia's and band's detection passes on the GPU (kernels/detect_structure.cu through
spla.csr_passes), and rle's CuPy array passes, against the NumPy passes: the same structures,
values and refusals on every kind of matrix the detection meets, in both dtypes and index types."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from spla import CSRMatrix, csr_passes
from spla.io import generators
from spla.planning import band, dia, rle, structured

pytestmark = pytest.mark.gpu
cupy = pytest.importorskip("cupy")


def _stray_diagonal():
    """poisson2d with one entry on a diagonal of its own: the sample misses it (a second pass)."""
    host = generators.poisson2d(200).to_scipy().tolil()
    host[5, 190] = 1.0
    return CSRMatrix.from_scipy(host.tocsr())


def _explicit_zero():
    host = sp.csr_matrix(generators.poisson2d(30).to_scipy())
    host.data[7] = 0.0
    return CSRMatrix.from_scipy(host)


def _empty_rows_band():
    host = generators.banded(5000, 7).to_scipy().tolil()
    host[100:180, :] = 0
    host = host.tocsr()
    host.eliminate_zeros()
    return CSRMatrix.from_scipy(host)


def _many_strays():
    """A stencil with a stray entry on each of 70 diagonals of their own: too many after the
    second pass, but few enough not to be refused for the missed entries alone."""
    host = generators.poisson2d(300).to_scipy().tolil()
    for k in range(70):
        host[k, 1000 + 37 * k] = 1.0
    return CSRMatrix.from_scipy(host.tocsr())


MATRICES = {
    "poisson2d": lambda: generators.poisson2d(120),
    "poisson3d": lambda: generators.poisson3d(20),
    "band-61": lambda: generators.banded(4000, 30),
    "tiny": lambda: generators.banded(9, 1),  # sampled whole
    "rectangular": lambda: CSRMatrix.from_scipy(sp.diags([1.5, -2.0, 0.25, 3.0], [-3, 0, 40, 700], shape=(900, 1600),
                                                         format="csr")),
    "stray-diagonal": _stray_diagonal,
    "many-strays": _many_strays,
    "explicit-zero": _explicit_zero,
    "empty-rows-band": _empty_rows_band,
    "random": lambda: CSRMatrix.from_scipy(sp.random(3000, 3000, density=0.003, format="csr", random_state=4)),
    "sparse-band": lambda: CSRMatrix.from_scipy(sp.diags([np.ones(3000), np.where(np.arange(2998) % 3 == 0, 1.0, 0.0)],
                                                         [0, 2], format="csr")),
    "duplicates": lambda: CSRMatrix(np.ones(6), np.array([0, 1, 1, 2, 3, 3]), np.array([0, 3, 6]), (2, 4)),
    "unsorted-run": lambda: CSRMatrix(np.ones(6), np.array([1, 0, 2, 1, 2, 3]), np.array([0, 3, 6]), (2, 4)),
    "no-entries": lambda: CSRMatrix((5, 4)),
}


def _same(host_found, device_found):
    assert type(host_found) is type(device_found), (host_found, device_found)
    if isinstance(host_found, dia.Refusal):
        assert device_found.reason == host_found.reason
        return
    for name in ("offsets", "values", "first", "run_ptr", "run_start", "run_col"):
        if hasattr(host_found, name):
            np.testing.assert_array_equal(getattr(device_found, name).get(), getattr(host_found, name))
            assert getattr(device_found, name).dtype == getattr(host_found, name).dtype


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64], ids=["int32", "int64"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", list(MATRICES))
def test_the_device_finds_what_the_host_finds(name, dtype, index_dtype):
    made = MATRICES[name]()
    host = CSRMatrix(made.data.astype(dtype), made.indices.astype(index_dtype), made.indptr.astype(index_dtype),
                     made.shape)
    if name in ("poisson2d", "band-61", "stray-diagonal", "rectangular"):  # the cases a test could pass by luck
        assert isinstance(dia.structure(host), dia.Structure)
    for module in (dia, band, rle):
        _same(module.structure(host), module.structure(host.copy().to_device()))


def test_a_canonical_matrix_is_known_canonical_after_the_device_pass():
    A = generators.poisson2d(50).copy().to_device()
    A._cache.clear()
    assert isinstance(dia.structure(A), dia.Structure)
    assert A._known_flag("canonical") is True and A._known_flag("sorted") is True
    unsorted = MATRICES["unsorted-run"]().to_device()
    unsorted._cache.clear()
    assert dia.structure(unsorted) == structured.NOT_CANONICAL and unsorted._known_flag("canonical") is not True


def test_missed_entries_past_the_capacity_are_counted_not_kept():
    A = _many_strays()
    candidates = np.array([-300, -1, 0, 1, 300], dtype=np.int64)
    stride = dia._stride(A.n_rows)
    host_values = np.zeros(candidates.size * stride)
    device = A.copy().to_device()
    device_values = cupy.zeros(candidates.size * stride)
    on_host = csr_passes.check_diagonals(A, candidates, host_values, capacity=10)
    on_device = csr_passes.check_diagonals(device, candidates, device_values, capacity=10)
    assert on_device.missed == on_host.missed == 70 and on_device.zeros == on_host.zeros == 0
    assert on_device.canonical and on_host.canonical
    assert on_device.missed_diagonals.size == 10 and set(on_device.missed_diagonals) <= set(on_host.missed_diagonals)
    np.testing.assert_array_equal(device_values.get(), host_values)


def _palette_cases(rng):
    """Stencils whose values fit dia's palette or do not: two values over 3.6M slots (more than the
    pass's grid has threads), ten rows of a value of their own (the sample misses them: a second
    pass), 255 values, and 300 (too many, found past the sample)."""
    big = generators.poisson3d(80)
    own = generators.poisson3d(20)
    own.data[own.indptr[100:110]] = np.arange(10) + 0.5
    many = generators.poisson3d(20)
    many.data[:] = rng.choice(rng.standard_normal(255), many.nnz)
    past = generators.poisson3d(20)
    past.data[past.indptr[:300]] = np.arange(300) + 0.5
    return {"two-values": big, "own-rows": own, "255-values": many, "300-values": past}


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_the_device_finds_the_hosts_palette(monkeypatch, rng, dtype):
    monkeypatch.setattr(dia, "PALETTE_MIN_BYTES", 0)  # any size
    for name, made in _palette_cases(rng).items():
        host = made.astype(dtype)
        device = host.copy().to_device()
        want, got = dia.palette(host, dia.structure(host)), dia.palette(device, dia.structure(device))
        assert (want is None) == (got is None) == (name == "300-values"), name
        if want is not None:
            np.testing.assert_array_equal(got.codes.get(), want.codes)
            np.testing.assert_array_equal(got.table.get().view(np.uint8), want.table.view(np.uint8))


def test_palette_slots_past_the_capacity_are_counted_not_kept(rng):
    values = rng.choice(np.array([0.0, 1.5, -2.0, 4.0]), size=(5, 300_000))
    table = np.sort(np.array([0.0, 1.5, -2.0]).view(np.uint64)).view(np.float64)  # 4.0 is off it
    want = csr_passes.palette_codes(values, table, capacity=10)
    got = csr_passes.palette_codes(cupy.asarray(values), cupy.asarray(table), capacity=10)
    assert got.missed == want.missed > 300_000 and got.missed_bits.size == 10
    assert set(got.missed_bits.tolist()) == {np.float64(4.0).view(np.uint64)}
    np.testing.assert_array_equal(got.codes.get(), want.codes)
