"""The binary load cache: hits, staleness, corruption, atomic writes, fallback folder."""

from __future__ import annotations

import importlib
import json
import os

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

import spla
from spla.io import cache

io = importlib.import_module("spla.io.load")  # the module (spla.io.load is also the function)


@pytest.fixture
def mtx(tmp_path, rng):
    A = sp.random(60, 50, density=0.1, format="coo", random_state=rng)
    path = tmp_path / "m.mtx"
    scipy.io.mmwrite(path, A)
    return path, A.tocsr()


@pytest.fixture(autouse=True)
def private_user_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SPLA_CACHE_DIR", str(tmp_path / "user-cache"))


def count_parses(monkeypatch):
    calls = []
    real = io._read_file

    def counting(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(io, "_read_file", counting)
    return calls


def same(A, B):
    np.testing.assert_array_equal(A.to_scipy().toarray(), B.toarray())


def test_second_load_uses_cache(mtx, monkeypatch):
    path, ref = mtx
    calls = count_parses(monkeypatch)
    first = spla.load(path)
    assert not io.load_info(first)["cache_hit"] and len(calls) == 1
    assert (path.parent / "m.mtx.spla.npz").is_file()
    second = spla.load(path)
    assert io.load_info(second)["cache_hit"] and len(calls) == 1
    same(second, ref)
    assert second.dtype == first.dtype and second.index_dtype == first.index_dtype
    assert io.load_info(second)["duplicates_summed"] == io.load_info(first)["duplicates_summed"]


def test_cache_false_neither_reads_nor_writes(mtx, monkeypatch):
    path, ref = mtx
    calls = count_parses(monkeypatch)
    same(spla.load(path, cache=False), ref)
    assert not (path.parent / "m.mtx.spla.npz").exists()
    spla.load(path)
    spla.load(path, cache=False)
    assert len(calls) == 3


def test_stale_after_touch_or_edit(mtx, monkeypatch, rng):
    path, ref = mtx
    spla.load(path)
    calls = count_parses(monkeypatch)
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert not io.load_info(spla.load(path))["cache_hit"] and len(calls) == 1
    other = sp.random(60, 50, density=0.2, format="coo", random_state=rng)
    scipy.io.mmwrite(path, other)
    same(spla.load(path), other.tocsr())
    assert len(calls) == 2
    assert io.load_info(spla.load(path))["cache_hit"]


def test_old_format_version_is_ignored(mtx, monkeypatch):
    path, _ = mtx
    spla.load(path)
    monkeypatch.setattr(cache, "FORMAT_VERSION", cache.FORMAT_VERSION + 1)
    calls = count_parses(monkeypatch)
    spla.load(path)
    assert len(calls) == 1


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty", "foreign npz", "bad arrays"])
def test_corrupt_cache_is_ignored_and_rebuilt(mtx, monkeypatch, damage):
    path, ref = mtx
    spla.load(path)
    cached = path.parent / "m.mtx.spla.npz"
    if damage == "garbage":
        cached.write_bytes(b"not a zip file at all")
    elif damage == "truncated":
        cached.write_bytes(cached.read_bytes()[: cached.stat().st_size // 2])
    elif damage == "empty":
        cached.write_bytes(b"")
    elif damage == "foreign npz":
        with open(cached, "wb") as stream:
            np.savez(stream, something=np.arange(3))
    else:
        A, meta = cache.read_npz(cached)
        with open(cached, "wb") as stream:  # a valid archive whose column indices are out of range
            np.savez(stream, data=A.data, indices=A.indices + 1000, indptr=A.indptr,
                     meta=np.frombuffer(json.dumps(meta).encode(), np.uint8))
    calls = count_parses(monkeypatch)
    A = spla.load(path)
    same(A, ref)
    assert len(calls) == 1 and not io.load_info(A)["cache_hit"]
    assert io.load_info(spla.load(path))["cache_hit"]  # rebuilt


@pytest.mark.parametrize("error", [KeyboardInterrupt, OSError])
def test_no_partial_cache_after_failed_write(mtx, monkeypatch, error):
    path, ref = mtx

    def explode(*args, **kwargs):
        stream = args[0]
        stream.write(b"PK partial bytes")
        raise error("injected")

    monkeypatch.setattr(np, "savez", explode)
    if error is KeyboardInterrupt:
        with pytest.raises(KeyboardInterrupt):
            spla.load(path)
    else:
        same(spla.load(path), ref)  # a cache that cannot be written is not the user's problem
    leftovers = [p.name for p in path.parent.rglob("*") if p.is_file() and p.name != "m.mtx"]
    assert leftovers == []


def test_unwritable_folder_falls_back_to_user_cache(mtx, monkeypatch, tmp_path):
    path, ref = mtx
    real_mkstemp = cache.tempfile.mkstemp

    def refuse_source_folder(*args, dir=None, **kwargs):
        if os.path.samefile(dir, path.parent):
            raise PermissionError(13, "Permission denied", str(dir))
        return real_mkstemp(*args, dir=dir, **kwargs)

    monkeypatch.setattr(cache.tempfile, "mkstemp", refuse_source_folder)
    first = spla.load(path)
    written = io.load_info(first)["cache"]
    assert written and written.startswith(str(tmp_path / "user-cache"))
    second = spla.load(path)
    assert io.load_info(second)["cache_hit"] and io.load_info(second)["cache"] == written
    same(second, ref)


def test_save_npz_round_trip_and_scipy_npz(tmp_path, rng):
    A = spla.CSRMatrix.from_scipy(sp.random(30, 20, density=0.2, format="csr", random_state=rng),
                                  dtype=np.float32)
    path = io.save_npz(tmp_path / "a.npz", A)
    back = spla.load(path)
    assert back.dtype == np.float32
    np.testing.assert_array_equal(back.to_scipy().toarray(), A.to_scipy().toarray())
    scipy_path = tmp_path / "s.npz"
    sp.save_npz(scipy_path, A.to_scipy())
    np.testing.assert_array_equal(spla.load(scipy_path).to_scipy().toarray(), A.to_scipy().toarray())
    sp.save_npz(tmp_path / "coo.npz", A.to_scipy().tocoo())
    with pytest.raises(spla.MatrixFormatError, match="coo"):
        spla.load(tmp_path / "coo.npz")
