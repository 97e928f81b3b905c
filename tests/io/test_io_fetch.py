"""spla fetch against a local HTTP server on 127.0.0.1 (no real network).

The server serves archives the tests build; per test it can drop the
connection half way, ignore Range requests, serve garbage or answer 404.
"""

from __future__ import annotations

import io
import socket
import tarfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from spla import InputError
from spla.io import catalog
from spla.io import fetch as fetch_module
from spla.io.fetch import FetchError, NoNetworkError, fetch


def mtx_bytes(A, symmetry="general") -> bytes:
    buffer = io.BytesIO()
    scipy.io.mmwrite(buffer, A, symmetry=symmetry)
    return buffer.getvalue()


def tar_gz(members: dict) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


class Server:
    """Serves ``files`` (path -> bytes) with optional faults; records the Range headers it saw."""

    def __init__(self):
        self.files = {}
        self.drop_after = None       # bytes sent before the first response is cut (once)
        self.ignore_range = False
        self.ranges = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                data = owner.files.get(self.path)
                if data is None:
                    self.send_error(404, "Not Found")
                    return
                start = 0
                wanted = self.headers.get("Range")
                owner.ranges.append(wanted)
                if wanted and not owner.ignore_range:
                    start = int(wanted.split("=")[1].rstrip("-"))
                    if start >= len(data):
                        self.send_response(416)
                        self.send_header("Content-Range", f"bytes */{len(data)}")
                        self.end_headers()
                        return
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                else:
                    self.send_response(200)
                self.send_header("Content-Length", str(len(data) - start))
                self.end_headers()
                body = data[start:]
                if owner.drop_after is not None:
                    cut, owner.drop_after = owner.drop_after, None
                    self.wfile.write(body[:cut])
                    self.wfile.flush()
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def url(self, path):
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    s = Server()
    yield s
    s.close()


def make_entry(server, name="tiny", *, rows=40, cols=30, header_nnz=None, symmetry="general", verified=True,
               nnz=None):
    return catalog.Entry(name=name, group="Test", url=server.url(f"/MM/Test/{name}.tar.gz"), rows=rows,
                         cols=cols, nnz=nnz if nnz is not None else header_nnz, explicit_zeros=0,
                         header_nnz=header_nnz, nnz_verified=verified, symmetry=symmetry, field="real",
                         kind="test", stand_in="gen:random:40:3")


def publish(server, rng, name="tiny", *, rows=40, cols=30, density=0.2, extra_members=True, **entry_args):
    A = sp.random(rows, cols, density=density, format="coo", random_state=np.random.RandomState(rng.integers(2**31)))
    body = mtx_bytes(A)
    members = {f"{name}/{name}.mtx": body}
    if extra_members:
        members[f"{name}/{name}_b.mtx"] = mtx_bytes(sp.random(rows, 1, density=1.0, format="coo"))
    archive = tar_gz(members)
    server.files[f"/MM/Test/{name}.tar.gz"] = archive
    entry_args.setdefault("header_nnz", A.nnz)
    entry = make_entry(server, name, rows=rows, cols=cols, **entry_args)
    return A, body, archive, catalog.Catalog([entry])


def leftovers(folder):
    return sorted(p.name for p in folder.iterdir())


def test_fetch_success_extracts_the_named_member(server, rng, tmp_path):
    A, body, _, cat = publish(server, rng)
    path = fetch("tiny", tmp_path, catalog=cat, progress=False)
    assert path == tmp_path / "tiny.mtx"
    assert path.read_bytes() == body
    assert abs(scipy.io.mmread(path) - A).max() == 0
    assert leftovers(tmp_path) == ["tiny.mtx"]           # archive and .part removed
    assert server.ranges == [None]
    # a second call finds it present and does not download
    fetch("Test/tiny", tmp_path, catalog=cat, progress=False)
    assert server.ranges == [None]


def test_fetch_by_url_and_keep_archive(server, rng, tmp_path):
    _, body, archive, cat = publish(server, rng)
    path = fetch(server.url("/MM/Test/tiny.tar.gz"), tmp_path, catalog=catalog.Catalog([]), progress=False,
                 keep_archive=True)
    assert path.read_bytes() == body
    assert (tmp_path / "tiny.tar.gz").read_bytes() == archive


def test_resume_after_partial_download(server, rng, tmp_path):
    _, body, archive, cat = publish(server, rng, rows=300, cols=300, density=0.05)
    half = len(archive) // 2
    (tmp_path / "tiny.tar.gz.part").write_bytes(archive[:half])
    path = fetch("tiny", tmp_path, catalog=cat, progress=False)
    assert server.ranges == [f"bytes={half}-"]
    assert path.read_bytes() == body
    assert leftovers(tmp_path) == ["tiny.mtx"]


def test_dropped_connection_is_resumed_automatically(server, rng, tmp_path, capsys):
    _, body, archive, cat = publish(server, rng, rows=300, cols=300, density=0.05)
    server.drop_after = len(archive) // 3
    path = fetch("tiny", tmp_path, catalog=cat, progress=True, timeout=5)
    assert path.read_bytes() == body
    assert server.ranges == [None, f"bytes={len(archive) // 3}-"]
    assert "resuming" in capsys.readouterr().err


def test_dropped_connection_without_retries_keeps_the_part_then_resumes(server, rng, tmp_path):
    _, body, archive, cat = publish(server, rng, rows=300, cols=300, density=0.05)
    server.drop_after = len(archive) // 2
    with pytest.raises(FetchError, match="run the same command again to resume") as info:
        fetch("tiny", tmp_path, catalog=cat, progress=False, retries=0, timeout=5)
    assert "\n" not in str(info.value)
    assert leftovers(tmp_path) == ["tiny.tar.gz.part"]
    assert (tmp_path / "tiny.tar.gz.part").stat().st_size == len(archive) // 2
    path = fetch("tiny", tmp_path, catalog=cat, progress=False, timeout=5)
    assert path.read_bytes() == body
    assert server.ranges[-1] == f"bytes={len(archive) // 2}-"


def test_server_ignoring_range_restarts_cleanly(server, rng, tmp_path):
    _, body, archive, cat = publish(server, rng)
    (tmp_path / "tiny.tar.gz.part").write_bytes(archive[:10])
    server.ignore_range = True
    assert fetch("tiny", tmp_path, catalog=cat, progress=False).read_bytes() == body


def test_part_longer_than_the_file_restarts(server, rng, tmp_path):
    _, body, archive, cat = publish(server, rng)
    (tmp_path / "tiny.tar.gz.part").write_bytes(archive + b"junk")
    assert fetch("tiny", tmp_path, catalog=cat, progress=False).read_bytes() == body


def test_corrupt_archive_is_reported_and_deleted(server, rng, tmp_path):
    _, _, archive, cat = publish(server, rng)
    server.files["/MM/Test/tiny.tar.gz"] = b"\x1f\x8b" + bytes(rng.integers(0, 256, 4000, dtype=np.uint8))
    with pytest.raises(FetchError, match="not a readable .tar.gz"):
        fetch("tiny", tmp_path, catalog=cat, progress=False)
    assert leftovers(tmp_path) == []
    # a truncated but otherwise valid gzip stream is corrupt too
    server.files["/MM/Test/tiny.tar.gz"] = archive[: len(archive) * 2 // 3]
    with pytest.raises(FetchError, match="not a readable .tar.gz"):
        fetch("tiny", tmp_path, catalog=cat, progress=False)
    assert leftovers(tmp_path) == []


def test_wrong_nnz_is_refused_before_writing(server, rng, tmp_path):
    A, _, _, _ = publish(server, rng)
    cat = catalog.Catalog([make_entry(server, header_nnz=A.nnz + 1)])
    with pytest.raises(FetchError, match="nnz mismatch") as info:
        fetch("tiny", tmp_path, catalog=cat, progress=False)
    assert f"{A.nnz} entries" in str(info.value)
    assert not (tmp_path / "tiny.mtx").exists()
    assert leftovers(tmp_path) == ["tiny.tar.gz"]          # the download is kept for --no-verify
    assert fetch("tiny", tmp_path, catalog=cat, progress=False, verify=False).is_file()


def test_wrong_shape_is_refused(server, rng, tmp_path):
    publish(server, rng)
    cat = catalog.Catalog([make_entry(server, rows=41, header_nnz=None, verified=False, nnz=10_000)])
    with pytest.raises(FetchError, match="40 x 30"):
        fetch("tiny", tmp_path, catalog=cat, progress=False)


def test_unverified_symmetric_count_uses_the_range(server, rng, tmp_path):
    S = sp.random(50, 50, density=0.1, format="csr", random_state=np.random.RandomState(1))
    S = (S + S.T + sp.identity(50)).tocoo()
    body = mtx_bytes(S, symmetry="symmetric")
    server.files["/MM/Test/sym.tar.gz"] = tar_gz({"sym/sym.mtx": body})
    cat = catalog.Catalog([make_entry(server, "sym", rows=50, cols=50, header_nnz=None, verified=False,
                                      symmetry="symmetric", nnz=S.nnz)])
    assert fetch("sym", tmp_path, catalog=cat, progress=False).read_bytes() == body


def test_body_shorter_than_its_header_is_refused(server, rng, tmp_path):
    A = sp.random(20, 20, density=0.3, format="coo", random_state=np.random.RandomState(2))
    lines = mtx_bytes(A).splitlines(keepends=True)
    server.files["/MM/Test/cut.tar.gz"] = tar_gz({"cut/cut.mtx": b"".join(lines[:-3])})
    cat = catalog.Catalog([make_entry(server, "cut", rows=20, cols=20, header_nnz=A.nnz)])
    with pytest.raises(FetchError, match="entry lines but the header declares"):
        fetch("cut", tmp_path, catalog=cat, progress=False)
    assert not (tmp_path / "cut.mtx").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_interrupt_during_unpacking_leaves_no_mtx(server, rng, tmp_path, monkeypatch):
    _, _, _, cat = publish(server, rng, rows=300, cols=300, density=0.05)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(fetch_module, "_copy_counting_lines", interrupted)
    with pytest.raises(KeyboardInterrupt):
        fetch("tiny", tmp_path, catalog=cat, progress=False)
    assert leftovers(tmp_path) == ["tiny.tar.gz"]


def test_http_404_is_one_line(server, tmp_path):
    cat = catalog.Catalog([make_entry(server, "missing", header_nnz=1)])
    with pytest.raises(FetchError, match="HTTP 404") as info:
        fetch("missing", tmp_path, catalog=cat, progress=False)
    assert "\n" not in str(info.value)
    assert leftovers(tmp_path) == []


def test_no_network_says_so_and_names_the_stand_in(tmp_path):
    with socket.socket() as probe:          # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    entry = catalog.Entry(name="far", group="Test", url=f"http://127.0.0.1:{port}/MM/Test/far.tar.gz", rows=1,
                          cols=1, nnz=1, explicit_zeros=0, header_nnz=1, nnz_verified=True, symmetry="general",
                          field="real", kind="test", stand_in="gen:weblike")
    with pytest.raises(NoNetworkError) as info:
        fetch("far", tmp_path, catalog=catalog.Catalog([entry]), progress=False, timeout=2)
    message = str(info.value)
    assert "cannot reach" in message and "gen:weblike" in message and "\n" not in message


def test_unknown_name_and_bad_url(tmp_path):
    with pytest.raises(InputError, match="not in the matrix catalogue"):
        fetch("no-such-matrix", tmp_path, progress=False)
    with pytest.raises(InputError, match=".tar.gz"):
        fetch("http://127.0.0.1:9/file.zip", tmp_path, progress=False)


def test_generated_catalogue_entry(tmp_path):
    entry = catalog.Entry(name="dense_small", group="spla", url=None, rows=30, cols=30, nnz=900,
                          explicit_zeros=0, header_nnz=900, nnz_verified=True, symmetry="general", field="real",
                          kind="dense", generator="gen:blockdense:30:30:30:1")
    path = fetch("dense_small", tmp_path, catalog=catalog.Catalog([entry]), progress=False)
    M = scipy.io.mmread(path)
    assert M.shape == (30, 30) and M.nnz == 900
