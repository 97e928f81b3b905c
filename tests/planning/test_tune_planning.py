"""spla.planning.tune on the CPU: candidate lists, fingerprints, the persistent
tuning cache (atomic, tolerant of corrupt and unwritable files) and how ``auto``
takes a cached winner. The measuring half is GPU-only (tests/ops/test_tune_gpu.py)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
import scipy.sparse as sp

import spla
from spla import kernel_files
from spla.csr import CSRMatrix
from spla.io import generators
from spla.planning import band, segmented
from spla.planning import spmm as spmm_policy
from spla.planning import spmv as policy
from spla.planning import tune as plan_tune

GPU = "NVIDIA H200"


@pytest.fixture
def cache_file(tmp_path, monkeypatch):
    """A private tuning cache for the test (never the user's)."""
    path = tmp_path / "cache" / "tune.json"
    monkeypatch.setenv(plan_tune.CACHE_ENV, str(path))
    return path


def _rows(rng, lengths, n_cols):
    lengths = np.asarray(lengths, dtype=np.int64)
    indptr = np.concatenate(([0], np.cumsum(lengths)))
    indices = np.concatenate([np.sort(rng.choice(n_cols, size=k, replace=False)) for k in lengths]
                             + [np.empty(0, dtype=np.int64)])
    return CSRMatrix(rng.uniform(-1, 1, indptr[-1]), indices, indptr, (len(lengths), n_cols))


MATRICES = {
    "poisson2d": lambda rng: generators.poisson2d(40),
    "banded": lambda rng: generators.banded(600, 40),
    "powerlaw": lambda rng: generators.powerlaw(4000, 6),
    "hugerows": lambda rng: generators.hugerows(3000, 2, 2500),
    "wide": lambda rng: _rows(rng, rng.integers(1500, 2500, 6), 100_000),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", MATRICES)
def test_candidates_rule_first_distinct_and_plannable(name, dtype, rng):
    A = MATRICES[name](rng).astype(dtype)
    names = plan_tune.candidates(A)
    assert names[0] == policy.rule_kernel(A)
    assert 5 <= len(names) <= 18  # 18: dia at 1, 2 and 4 rows a thread on a float32 stencil
    configurations = set()
    for kernel in names:
        family, param = policy.parse_kernel(kernel)
        configurations.add((family, policy.bound_param(A, family, param)))
        plan = policy.plan_spmv(A, kernel)  # every candidate can run on A
        assert plan.family == family
    assert len(configurations) == len(names), "two candidates name one configuration"
    families = {policy.parse_kernel(n)[0] for n in names}
    lane_family = "band" if band.applies(A) else "warp"  # band: warp's mapping without the indices
    assert {lane_family, "vector", "adaptive2", "adaptive", "segmented"} <= families
    assert ("warp" in families) != ("band" in families)
    s = policy.row_stats(A)
    assert ("scalar" in families) == (s.max <= policy.AUTO.long_row or names[0] == "scalar")
    ks = {policy.bound_param(A, "segmented", policy.parse_kernel(n)[1]) for n in names if n.startswith("segmented")}
    assert ks == set(segmented.segmented_entries(dtype))
    ts = {policy.bound_param(A, "staged", policy.parse_kernel(n)[1]) for n in names if n.startswith("staged")}
    assert ts == set(segmented.staged_entries(dtype))
    for family in (lane_family, "vector"):
        widths = sorted(policy.bound_param(A, family, policy.parse_kernel(n)[1]) for n in names
                        if n.startswith(family))
        centre = policy.bound_param(A, family, None)  # the lanes rule's width
        assert centre in widths and 2 <= len(widths) <= 3
        assert all(abs(policy.LANE_WIDTHS.index(w) - policy.LANE_WIDTHS.index(centre)) <= 1 for w in widths)


def test_cusparse_is_a_candidate_from_vendor_min_nnz(monkeypatch):
    A = generators.powerlaw(4000, 6)
    families = {policy.parse_kernel(n)[0] for n in plan_tune.candidates(A)}
    assert "cusparse" not in families  # a few microseconds of fixed cost: never the winner
    monkeypatch.setattr(plan_tune, "VENDOR_MIN_NNZ", A.nnz)
    names = [n for n in plan_tune.candidates(A) if n.startswith("cusparse")]
    algorithms = sorted(policy.bound_param(A, "cusparse", policy.parse_kernel(n)[1]) for n in names)
    assert algorithms == [1, 2], "both CSR algorithms, once each"
    assert all(policy.plan_spmv(A, n).family == "cusparse" for n in names)


def test_candidates_of_an_empty_matrix():
    for A in (spla.as_csr(sp.csr_matrix((7, 5))), spla.as_csr(sp.csr_matrix((0, 5)))):
        assert plan_tune.candidates(A) == ["scalar"]


def test_row_histogram_bins_by_powers_of_two(rng):
    lengths = np.concatenate([rng.integers(0, 5000, 500), [0, 1, 2, 3, 4, 7, 8, 2**30]])
    got = plan_tune.row_histogram(lengths)
    want = [0] * plan_tune.HISTOGRAM_BINS
    for k in lengths:
        b = 0 if k == 0 else min(int(k).bit_length(), plan_tune.HISTOGRAM_BINS - 1)
        want[b] += 1
    assert got == want and sum(got) == lengths.size


def test_fingerprint_separates_what_changes_the_winner(rng, monkeypatch):
    A = _rows(rng, rng.integers(0, 30, 200), 300)
    key = plan_tune.fingerprint(A, GPU)
    same = CSRMatrix(A.data.copy(), A.indices.copy(), A.indptr.copy(), A.shape)
    assert plan_tune.fingerprint(same, GPU) == key  # the same structure in a new object
    assert plan_tune.fingerprint(A.astype(np.float32), GPU) != key
    assert plan_tune.fingerprint(A, "NVIDIA A100") != key
    assert plan_tune.fingerprint(CSRMatrix(A.data, A.indices, A.indptr, A.shape, index_dtype=np.int64), GPU) != key
    # one entry moved to the next row: same shape and nnz, another indptr
    lengths = np.diff(A.indptr)
    i = int(np.flatnonzero(lengths > 0)[0])
    lengths[i] -= 1
    lengths[i + 1] += 1
    moved = _rows(rng, lengths, 300)
    assert moved.nnz == A.nnz and plan_tune.fingerprint(moved, GPU) != key
    with monkeypatch.context() as patch:
        patch.setattr(spla, "__version__", "999")
        assert plan_tune.fingerprint(CSRMatrix(A.data, A.indices, A.indptr, A.shape), GPU) != key
    with monkeypatch.context() as patch:  # another build of the kernels: not reused
        patch.setattr(kernel_files, "digest", lambda: "another build")
        assert plan_tune.fingerprint(CSRMatrix(A.data, A.indices, A.indptr, A.shape), GPU) != key
    assert plan_tune.fingerprint(CSRMatrix(A.data, A.indices, A.indptr, A.shape), GPU) == key
    fields = plan_tune.fingerprint_fields(A, GPU)
    assert fields["shape"] == list(A.shape) and fields["nnz"] == A.nnz and fields["gpu"] == GPU
    assert fields["dtype"] == "float64" and fields["index_dtype"] == A.index_dtype.name


def test_cache_path_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv(plan_tune.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert plan_tune.cache_path() == tmp_path / "spla" / "tune.json"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert plan_tune.cache_path() == tmp_path / "home" / ".cache" / "spla" / "tune.json"
    monkeypatch.setenv(plan_tune.CACHE_ENV, "off")
    assert plan_tune.cache_path() is None
    assert plan_tune.TuneCache().store("k", {"kernel": "scalar"}) is False
    assert plan_tune.TuneCache().load() == {}


def test_cache_round_trip_is_atomic_and_bounded(cache_file, monkeypatch):
    cache = plan_tune.TuneCache()
    assert cache.path == cache_file and cache.load() == {}
    assert cache.store("a", {"kernel": "warp:8", "us": {"warp:8": 3.5}})
    assert cache.store("b", {"kernel": "adaptive2"})
    assert plan_tune.TuneCache().lookup("a")["kernel"] == "warp:8"
    assert plan_tune.TuneCache().lookup("missing") is None
    assert os.listdir(cache_file.parent) == ["tune.json"]  # no temporary file left behind
    content = json.loads(cache_file.read_text())
    assert content["format"] == plan_tune.CACHE_FORMAT and set(content["entries"]) == {"a", "b"}
    monkeypatch.setattr(plan_tune, "CACHE_ENTRIES", 2)
    assert cache.store("c", {"kernel": "scalar"})
    assert set(cache.load()) == {"b", "c"}  # the oldest went


@pytest.mark.parametrize("content", ["{not json", json.dumps([1, 2]), json.dumps({"format": 99, "entries": {}}),
                                     json.dumps({"format": plan_tune.CACHE_FORMAT, "entries": "x"})])
def test_corrupt_cache_is_ignored_with_a_warning(cache_file, content):
    cache_file.parent.mkdir(parents=True)
    cache_file.write_text(content)
    with pytest.warns(RuntimeWarning, match="ignoring the spla tuning cache"):
        assert plan_tune.TuneCache().load() == {}
    with pytest.warns(RuntimeWarning):  # a store over a corrupt file replaces it
        assert plan_tune.TuneCache().store("k", {"kernel": "scalar"})
    assert plan_tune.TuneCache().lookup("k")["kernel"] == "scalar"


def test_entries_without_a_kernel_name_are_dropped(cache_file):
    cache_file.parent.mkdir(parents=True)
    cache_file.write_text(json.dumps({"format": plan_tune.CACHE_FORMAT,
                                      "entries": {"a": {"kernel": 3}, "b": "x", "c": {"kernel": "scalar"}}}))
    assert list(plan_tune.TuneCache().load()) == ["c"]


def test_unwritable_cache_warns_and_never_raises(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv(plan_tune.CACHE_ENV, str(blocker / "sub" / "tune.json"))  # parent is a file
    with pytest.warns(RuntimeWarning, match="could not write"):
        assert plan_tune.TuneCache().store("k", {"kernel": "scalar"}) is False


def test_auto_takes_a_cached_winner(cache_file, rng):
    A = generators.powerlaw(3000, 6)
    rule = policy.rule_kernel(A)
    winner = "warp:4" if rule != "warp:4" else "scalar"
    plan_tune.TuneCache().store(plan_tune.fingerprint(A, GPU), {"kernel": winner})
    fresh = CSRMatrix(A.data, A.indices, A.indptr, A.shape)  # a later process: a new object
    assert plan_tune.apply_cached(fresh, GPU) == winner
    assert policy.choose_kernel(fresh) == winner
    assert policy.plan_spmv(fresh, "auto").family == "warp"
    assert policy.plan_spmv(fresh, "tune").param == policy.plan_spmv(fresh, "auto").param
    info = policy.describe_choice(fresh)
    assert info["source"] == "cached" and info["kernel"] == winner and info["rule"] == rule
    # another GPU misses, and so does a matrix with another structure
    other = CSRMatrix(A.data, A.indices, A.indptr, A.shape)
    assert plan_tune.apply_cached(other, "NVIDIA A100") is None
    assert policy.choose_kernel(other) == rule and policy.describe_choice(other)["source"] == "rule"


def test_no_cache_file_costs_no_fingerprint(cache_file):
    A = generators.poisson2d(20)
    assert plan_tune.apply_cached(A, GPU) is None
    assert plan_tune.FINGERPRINT_KEY not in A._cache
    assert policy.choose_kernel(A) == policy.rule_kernel(A)


def test_cached_entry_of_an_unknown_kernel_is_ignored(cache_file):
    A = generators.poisson2d(20)
    plan_tune.TuneCache().store(plan_tune.fingerprint(A, GPU), {"kernel": "hyperwarp:3"})
    fresh = CSRMatrix(A.data, A.indices, A.indptr, A.shape)
    assert plan_tune.apply_cached(fresh, GPU) is None
    assert policy.choose_kernel(fresh) == policy.rule_kernel(fresh)


def test_set_choice_reaches_both_sides_and_drops_stale_launchers():
    A = generators.poisson2d(10)
    twin = CSRMatrix(A.data, A.indices, A.indptr, A.shape)
    A._cache["device"], twin._cache["host"] = twin, A  # as to_device() links them
    A._cache[policy.BOUND_KEY] = {"auto": object(), "tune": object(), "warp": object()}
    assert policy.choose_kernel(A) == policy.rule_kernel(A)  # cached as the rule's
    plan_tune.set_choice(twin, "segmented:4", "measured")
    for m in (A, twin):
        assert policy.choose_kernel(m) == "segmented:4"
        assert policy.describe_choice(m)["source"] == "measured"
    assert set(A._cache[policy.BOUND_KEY]) == {"warp"}


def test_tune_is_a_gpu_kernel_name():
    assert "tune" in policy.KERNELS and policy.parse_kernel("tune") == ("tune", None)
    with pytest.raises(spla.KernelError, match="runs on the GPU"):
        spla.spmv(generators.poisson2d(4), np.ones(16), kernel="tune")


# ------------------------------------------------------------------ SpMM
@pytest.mark.parametrize("k", [2, 8, 16, 32, 33, 64])
@pytest.mark.parametrize("name", MATRICES)
def test_spmm_candidates_rule_first_distinct_and_plannable(name, k, rng):
    A = MATRICES[name](rng).astype(np.float32)
    names = plan_tune.spmm_candidates(A, k)
    assert names[0] == spmm_policy.rule_kernel(A, k) and len(set(names)) == len(names)
    assert ("regk" in names) == (k <= spmm_policy.REGK_MAX_K)
    assert {"subwarp", "warp", "adaptive"} <= set(names)
    fused_runs_itself = k <= spmm_policy.REGK_MAX_K or spmm_policy.fused_wide_lanes(k, A.dtype) is not None
    assert ("fused" in names) == fused_runs_itself  # past 16 a k fused cannot take would run adaptive again
    longest = int(np.diff(A.indptr).max())
    # these matrices are small: fused's default segments are 256 long, and the tuner tries 1,024 beside
    assert spmm_policy.fused_segment_nnz(A.nnz) == 256 and "fused:256" not in names
    assert ("fused:1024" in names) == (fused_runs_itself and longest > 256)  # else the same schedule as fused
    assert "cusparse" not in names  # under VENDOR_MIN_NNZ
    for kernel in names:
        plan = spmm_policy.plan_spmm(A, k, kernel)
        if kernel == "fused:1024":
            assert plan.kernel == "fused" and plan.schedule.segment_nnz == 1024
            assert plan.key != spmm_policy.plan_spmm(A, k, "fused").key


def test_spmm_candidates_add_dia_on_stencils_and_cusparse_from_vendor_min_nnz(monkeypatch):
    A = generators.poisson2d(40)
    assert "dia" in plan_tune.spmm_candidates(A, 32)  # past auto's dia cut too: measured, not assumed
    assert "dia" not in plan_tune.spmm_candidates(generators.powerlaw(4000, 6), 8)
    monkeypatch.setattr(plan_tune, "VENDOR_MIN_NNZ", A.nnz)
    assert plan_tune.spmm_candidates(A, 8)[-1] == "cusparse"
    empty = spla.as_csr(sp.csr_matrix((7, 5)))
    assert plan_tune.spmm_candidates(empty, 8) == [spmm_policy.rule_kernel(empty, 8)]


def test_fused_segments_parse_and_unknown_spmm_names_raise():
    assert spmm_policy.parse_spmm_kernel("fused:256") == ("fused", 256)
    assert spmm_policy.parse_spmm_kernel("warp") == ("warp", None)
    for bad in ("fused:300", "fused:", "fused:x", "warp:8", "hyperwarp", "tune"):
        with pytest.raises(spla.KernelError):
            spmm_policy.parse_spmm_kernel(bad)
    with pytest.raises(spla.KernelError, match="fused:N"):
        spmm_policy.plan_spmm(generators.poisson2d(10), 8, "fused:100")


def test_spmm_auto_takes_a_cached_winner_per_k(cache_file):
    A = generators.powerlaw(3000, 6)
    rule8, rule32 = spmm_policy.rule_kernel(A, 8), spmm_policy.rule_kernel(A, 32)
    winner = "warp" if rule8 != "warp" else "subwarp"
    plan_tune.TuneCache().store(plan_tune.spmm_key(A, 8, GPU), {"kernel": winner})
    fresh = CSRMatrix(A.data, A.indices, A.indptr, A.shape)  # a later process: a new object
    assert plan_tune.apply_cached_spmm(fresh, 8, GPU) == winner
    assert spmm_policy.tuned_choice(fresh, 8) == (winner, "cached")
    assert spmm_policy.choose_kernel(fresh, 8) == winner and spmm_policy.plan_spmm(fresh, 8).kernel == winner
    # another k, another GPU and the SpMV keep their own choices
    assert plan_tune.apply_cached_spmm(fresh, 32, GPU) is None and spmm_policy.choose_kernel(fresh, 32) == rule32
    assert plan_tune.apply_cached(fresh, GPU) is None and policy.choose_kernel(fresh) == policy.rule_kernel(fresh)
    other = CSRMatrix(A.data, A.indices, A.indptr, A.shape)
    assert plan_tune.apply_cached_spmm(other, 8, "NVIDIA A100") is None
    assert spmm_policy.choose_kernel(other, 8) == rule8


def test_spmm_cache_is_looked_up_once_and_ignores_unknown_names(cache_file, monkeypatch):
    A = generators.poisson2d(20)
    plan_tune.TuneCache().store(plan_tune.spmm_key(A, 8, GPU), {"kernel": "fused:300"})
    fresh = CSRMatrix(A.data, A.indices, A.indptr, A.shape)
    assert plan_tune.apply_cached_spmm(fresh, 8, GPU) is None
    assert spmm_policy.choose_kernel(fresh, 8) == spmm_policy.rule_kernel(fresh, 8)
    lookups = []
    monkeypatch.setattr(plan_tune.TuneCache, "lookup", lambda self, key: lookups.append(key))
    assert plan_tune.apply_cached_spmm(fresh, 8, GPU) is None and lookups == []  # once per (matrix, k)


def test_spmm_cache_without_a_file_is_read_once_and_names_no_gpu(cache_file, monkeypatch):
    """auto's binding asks the cache before every unpacked call: without a cache file it pays one
    look, and it never asks which GPU runs."""
    import spla.device

    A = generators.poisson2d(20)
    monkeypatch.setattr(spla.device, "device_name", lambda: pytest.fail("the GPU was named"))
    assert plan_tune.apply_cached_spmm(A, 8) is None  # no file
    monkeypatch.setattr(plan_tune, "TuneCache", lambda *a: pytest.fail("the cache was read again"))
    assert plan_tune.apply_cached_spmm(A, 8) is None


def test_set_spmm_choice_reaches_both_sides_and_drops_bound_spmm_launchers():
    A = generators.poisson2d(10)
    twin = CSRMatrix(A.data, A.indices, A.indptr, A.shape)
    A._cache["device"], twin._cache["host"] = twin, A  # as to_device() links them
    A._cache[policy.SPMM_BOUND_KEY] = {("auto", (100, 8)): object()}
    plan_tune.set_spmm_choice(twin, 8, "fused:256", "measured")
    for m in (A, twin):
        assert spmm_policy.choose_kernel(m, 8) == "fused:256"
        assert spmm_policy.choose_kernel(m, 16) == spmm_policy.rule_kernel(m, 16)
    assert policy.SPMM_BOUND_KEY not in A._cache


def test_spmm_tune_is_a_gpu_kernel_name():
    with pytest.raises(spla.KernelError, match="runs on the GPU"):
        spla.spmm(generators.poisson2d(4), np.ones((16, 3)), kernel="tune")


@pytest.mark.parametrize("k", [0, -3, 2.5, "8"])
def test_tune_refuses_a_k_that_is_not_a_positive_integer(k):
    with pytest.raises(spla.InputError, match="positive integer"):
        spla.tune(generators.poisson2d(4), k=k)
