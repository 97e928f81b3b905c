"""Atomic writes: a killed write leaves nothing behind and the next run works."""


from __future__ import annotations

import gzip
import io as pyio
import tarfile

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner

from spla import MatrixFormatError
from spla import io as spla_io
from spla.cli import main
from spla.io import cache, mmio

WIDE = 2**31 + 5  # a dimension no int32 can index


# ===================================================================== atomic writes
def _leftovers(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".") and p.name.endswith(".tmp"))


class Interrupted(Exception):
    pass


def test_cache_write_killed_half_way_leaves_nothing_and_next_load_caches(tmp_path, monkeypatch):
    source = tmp_path / "m.mtx"
    mmio.write_mtx(source, sp.random(30, 30, density=0.2, random_state=3))
    real_savez = np.savez

    def half(stream, **arrays):
        stream.write(b"PK\x03\x04 half an archive")
        raise Interrupted

    monkeypatch.setattr(np, "savez", half)
    with pytest.raises(Interrupted):
        spla_io.load(source)
    assert not (tmp_path / ("m.mtx" + cache.SUFFIX)).exists() and _leftovers(tmp_path) == []
    monkeypatch.setattr(np, "savez", real_savez)
    A = spla_io.load(source)
    assert spla_io.load_info(A)["cache"] == str(tmp_path / ("m.mtx" + cache.SUFFIX))
    assert spla_io.load_info(spla_io.load(source))["cache_hit"]


@pytest.mark.parametrize("name", ["g.mtx", "g.mtx.gz"])
def test_generate_killed_half_way_leaves_nothing_and_next_run_works(tmp_path, monkeypatch, name):
    out = tmp_path / name
    real = mmio._write_coordinate

    def half(stream, coo, comment):
        stream.write(b"%%MatrixMarket matrix coordinate real general\n10 10 5\n1 1 ")
        raise Interrupted

    monkeypatch.setattr(mmio, "_write_coordinate", half)
    result = CliRunner().invoke(main, ["generate", "random", "10", "3", "--out", str(out)])
    assert isinstance(result.exception, Interrupted)
    assert not out.exists() and _leftovers(tmp_path) == []
    monkeypatch.setattr(mmio, "_write_coordinate", real)
    result = CliRunner().invoke(main, ["generate", "random", "10", "3", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert spla_io.load(out, cache=False).nnz == 30


def test_fetch_unpack_killed_half_way_leaves_nothing_and_next_run_works(tmp_path, monkeypatch):
    from spla.io import fetch

    body = b"%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n2 2 2\n"
    archive = tmp_path / "tiny.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        member = tarfile.TarInfo("tiny/tiny.mtx")
        member.size = len(body)
        tar.addfile(member, pyio.BytesIO(body))
    dest = tmp_path / "tiny.mtx"
    real = fetch._copy_counting_lines

    def half(stream, out, head, progress, total):
        out.write(head + b"1 1 ")
        raise Interrupted

    monkeypatch.setattr(fetch, "_copy_counting_lines", half)
    with pytest.raises(Interrupted):
        fetch.extract(archive, "tiny", dest, progress=False)
    assert not dest.exists() and _leftovers(tmp_path) == []
    monkeypatch.setattr(fetch, "_copy_counting_lines", real)
    assert fetch.extract(archive, "tiny", dest, progress=False) == dest
    assert dest.read_bytes() == body


def test_damaged_cache_entry_is_ignored_and_rebuilt(tmp_path):
    source = tmp_path / "m.mtx.gz"
    mmio.write_mtx(source, sp.random(20, 20, density=0.3, random_state=4))
    first = spla_io.load(source)
    entry = tmp_path / ("m.mtx.gz" + cache.SUFFIX)
    entry.write_bytes(entry.read_bytes()[:100])  # a torn file from some other writer
    again = spla_io.load(source)
    assert not spla_io.load_info(again)["cache_hit"]
    np.testing.assert_array_equal(again.to_scipy().toarray(), first.to_scipy().toarray())
    assert spla_io.load_info(spla_io.load(source))["cache_hit"]


def test_truncated_gz_source_is_a_format_error_not_a_traceback(tmp_path):
    path = tmp_path / "t.mtx.gz"
    path.write_bytes(gzip.compress(b"%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n2 2 2\n")[:-9])
    with pytest.raises(MatrixFormatError, match=str(path)):
        spla_io.load(path, cache=False)
