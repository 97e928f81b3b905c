"""The compiled Matrix Market body check (spla/io/mtx_check.c) and how it is built.

The C check must give exactly the verdicts of the NumPy check it replaces
(``mmio._body_well_formed`` after the alphabet test): the token count, or -1.
Both are run on the same generated texts; the reader built on either must load
or refuse every file alike; and the C check must never read a byte outside
the buffer it is given (a hostile file is exactly what it sees).
"""

from __future__ import annotations

import ctypes
import gzip
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from spla import MatrixFormatError
from spla.io import mmio, native

ROOT = Path(__file__).resolve().parents[2]
# (width, index_fields, real) as _BodyCheck asks for them: coordinate real, complex, pattern, integer; array
LAYOUTS = [(3, 2, True), (4, 2, True), (2, 2, False), (3, 2, False), (1, 0, True), (2, 0, True), (1, 0, False)]
BLANKS = [" ", "  ", "\t", " \t", "\r", "\v", "\f"]
JUNK = ["", ".", "-", "+", "e", "E5", "1..2", "1.2.3", "1e", "1e+", "1e5e5", "1e5.3", "1e-5-3", ".e5", "-.e5",
        "+-1", "--1", "1-2", "1.5D+02", "0x1p3", "1_000", "nan", "inf", "Infinity", "1,5", "\x00", "\x1c", "\xe9",
        "%", "#", "-.", "+.", "1.e", ".5.", "e", "5e", "5e-", "0.-5", "1.5e3.", "9" * 30]


def compiled():
    function = native.mtx_checker()
    if function is None:
        pytest.skip(f"no C body check here: {native.status()}")
    return function


@pytest.fixture(scope="module")
def token_by_token(tmp_path_factory):
    """The C check built without its 64-byte blocks (what targets without SSE2 get)."""
    compiled()
    target = tmp_path_factory.mktemp("scalar") / "mtx_check_scalar.so"
    native._build(native.MTX_CHECK_SOURCE, target, [*native.compiler(), "-DSPLA_MTX_CHECK_SCALAR"])
    function = ctypes.CDLL(str(target)).spla_mtx_check
    function.restype = ctypes.c_int64
    function.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32]
    return function


@pytest.fixture(params=["default", "token by token"])
def checker(request):
    """Each build of the C check: the default (64-byte blocks on x86-64) and the token-by-token one."""
    return compiled() if request.param == "default" else request.getfixturevalue("token_by_token")


def numpy_verdict(text: bytes, width: int, index_fields: int, real: bool) -> int:
    allowed = mmio._NUMBER_CHARS if real else mmio._WHITESPACE + mmio._DIGITS + b"+-"
    if text.translate(None, allowed):
        return -1
    return mmio._body_well_formed(text, width, index_fields, real)


def number(rng) -> str:
    value = rng.standard_normal() * 10.0 ** int(rng.integers(-8, 8))
    style = int(rng.integers(9))
    if style == 0:
        return repr(value)
    if style == 1:
        return f"{value:.6e}"
    if style == 2:
        return f"{value:+.3E}"
    if style == 3:
        return str(int(rng.integers(-10**6, 10**6)))
    if style == 4:
        return str(rng.choice(["3.", ".5", "-.5", "+.5", "1.e5", "0", "-0", "+7", "1E+00", "00012", "5e0"]))
    if style == 5:
        return str(int(rng.integers(0, 10**18)))
    if style == 6:
        return "9" * int(rng.integers(1, 40))
    return f"{value:.17g}"


def body(rng, width: int, index_fields: int, real: bool) -> bytes:
    """Whole lines of mostly valid entries, with a junk token, blank line or odd spacing now and then."""
    lines = []
    for _ in range(int(rng.integers(0, 9))):
        integers = 0.2 if real else 0.7
        tokens = [str(int(rng.integers(1, 10**6))) if k < index_fields or rng.random() < integers else number(rng)
                  for k in range(width)]
        draw = rng.random()
        if draw < 0.06:
            tokens[int(rng.integers(width))] = str(rng.choice(JUNK))
        elif draw < 0.08:
            tokens.append(number(rng))
        elif draw < 0.1:
            tokens.pop()
        elif draw < 0.12:
            tokens = []
        sep = [str(rng.choice(BLANKS)) if rng.random() < 0.3 else " " for _ in tokens]
        lead = str(rng.choice(BLANKS)) if rng.random() < 0.1 else ""
        tail = str(rng.choice(BLANKS)) if rng.random() < 0.1 else ""
        lines.append(lead + "".join(t + s for t, s in zip(tokens, sep)).rstrip(" ") + tail + "\n")
    text = "".join(lines)
    if rng.random() < 0.1:
        text += str(rng.choice(["\n", "\n\n", " \n", "\t\n"]))
    return text.encode("latin-1")


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda t: f"w{t[0]}i{t[1]}{'r' if t[2] else 'n'}")
def test_c_check_gives_the_numpy_verdict(layout, rng, checker):
    function = checker
    width, index_fields, real = layout
    verdicts = {"accepted": 0, "refused": 0}
    for case in range(2500):
        text = body(rng, *layout)
        want = numpy_verdict(text, *layout)
        got = native.check_lines(function, text, *layout)
        assert got == want, f"case {case}: C says {got}, NumPy {want} for {text!r}"
        verdicts["accepted" if got >= 0 else "refused"] += 1
    # both sides of the property are exercised
    assert min(verdicts.values()) > 500, verdicts


def test_c_check_gives_the_numpy_verdict_on_raw_bytes(rng, checker):
    """Any bytes at all, over the alphabet the check cares about plus a few strays."""
    function = checker
    alphabet = np.frombuffer(b" \t\r\n\v\f0123456789+-.eE\x00x\x80", np.uint8)
    weights = np.array([6, 1, 1, 4, 1, 1] + [3] * 10 + [1, 1, 2, 1, 1, 1, 1, 1], float)
    for case in range(6000):
        # whole lines, as the check is given them
        text = rng.choice(alphabet, size=int(rng.integers(0, 40)), p=weights / weights.sum()).tobytes() + b"\n"
        layout = LAYOUTS[case % len(LAYOUTS)]
        assert native.check_lines(function, text, *layout) == numpy_verdict(text, *layout), (case, text, layout)


@pytest.mark.parametrize("layout", [(3, 2, True), (4, 2, True), (2, 0, True), (3, 2, False)],
                         ids=lambda t: f"w{t[0]}i{t[1]}{'r' if t[2] else 'n'}")
def test_c_check_gives_the_numpy_verdict_at_every_block_offset(layout, rng, checker):
    """The C check reads 64 bytes at a time where it can: every byte of a body must meet every block boundary."""
    function = checker
    width = layout[0]
    for case in range(60):
        text = body(rng, *layout)
        for shift in range(2 * width, 2 * width + 64):  # a first line of `shift` bytes moves the body along
            lead = (" ".join(["1"] * width)).ljust(shift - 1).encode() + b"\n"
            shifted = lead + text
            assert native.check_lines(function, shifted, *layout) == numpy_verdict(shifted, *layout), \
                (case, shift, shifted)


def test_every_byte_inside_long_digit_runs(rng, checker):
    """Digit runs are scanned eight bytes at a time: every byte value, at every offset of a run, in each field."""
    function = checker
    for value in range(256):
        for offset in range(0, 19):
            run = bytearray(b"1234567890123456789")
            run[offset] = value
            for layout, line in (((3, 2, True), b"7 " + bytes(run) + b" 2.5\n"),
                                 ((3, 2, True), b"7 8 -" + bytes(run) + b"e-12\n"),
                                 ((3, 2, False), b"7 8 " + bytes(run) + b"\n")):
                want = numpy_verdict(line, *layout)
                assert native.check_lines(function, line, *layout) == want, (value, offset, line)


def test_c_check_refuses_a_buffer_that_does_not_end_a_line(checker):
    function = checker
    assert native.check_lines(function, b"1 2 3", 3, 2, True) == -1
    assert native.check_lines(function, b"1 2 3\n", 3, 2, True) == 3
    assert native.check_lines(function, b" \n\t\n", 3, 2, True) == 0
    assert native.check_lines(function, b"", 3, 2, True) == 0
    assert native.check_lines(function, b"1 2 3\n", 0, 0, True) == -1


GUARD_CHILD = r"""
import ctypes, mmap, sys
sys.path.insert(0, {root!r})
from spla.io import native
function = native.mtx_checker()
libc = ctypes.CDLL(None)
page = mmap.PAGESIZE
for text in {texts!r}:
    # the text ends exactly at a page that may not be read, and starts just after one
    region = mmap.mmap(-1, 3 * page)
    base = ctypes.addressof(ctypes.c_char.from_buffer(region))
    start = base + 2 * page - len(text)
    ctypes.memmove(start, text, len(text))
    for guard in (base, base + 2 * page):
        assert libc.mprotect(ctypes.c_void_p(guard), page, 0) == 0
    print(function(start, len(text), 3, 2, 1))
    for guard in (base, base + 2 * page):
        libc.mprotect(ctypes.c_void_p(guard), page, 3)
print("done")
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mprotect through ctypes")
@pytest.mark.parametrize("build", ["default", "token by token"])
def test_c_check_reads_nothing_outside_its_buffer(build, tmp_path):
    compiled()
    env = dict(os.environ)
    if build != "default":
        env.update(CC=" ".join([*native.compiler(), "-DSPLA_MTX_CHECK_SCALAR"]), SPLA_CACHE_DIR=str(tmp_path))
    texts = [b"1 2 3", b"1 2 3\n", b"12345678901234567", b"12345678901234567\n", b"1 2 1234567890123",
             b"1 2 3.5e", b"1 2 3.5e-", b"1 2 -", b"1 2 .", b"\n\n\n", b"   ", b"1 2 3\n   ",
             b"1 2 3\n4 5 6e+77\n", b"1 2 " + b"7" * 4000, b"1 2 " + b"7" * 4000 + b"\n",
             b"1 2 3  ", b"1 2 3\t\r", b"1 2 3\n4 5 6 ", b"1 2 3\n\n \x0b"]
    code = GUARD_CHILD.format(root=str(ROOT), texts=texts)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, f"the check read outside its buffer (exit {done.returncode}): {done.stderr[-500:]}"
    got = [int(v) for v in done.stdout.split()[:-1]]
    function = native.mtx_checker()
    assert got == [native.check_lines(function, t, 3, 2, True) for t in texts]
    assert got[1] == 3 and got[0] == -1


# --------------------------------------------------------------- building
@pytest.fixture
def fresh_build(tmp_path, monkeypatch):
    """A build in an empty cache folder; the process-wide build is restored afterwards."""
    monkeypatch.setenv("SPLA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(native.NATIVE_ENV, raising=False)
    native._mtx_check_build.cache_clear()
    yield tmp_path / "cache" / "native"
    native._mtx_check_build.cache_clear()


def test_build_is_cached_and_named_after_its_source(fresh_build, monkeypatch):
    if native.mtx_checker() is None:
        pytest.skip(f"no C compiler here: {native.status()}")
    built = list(fresh_build.glob("mtx_check-*.so"))
    assert len(built) == 1 and native.status() == f"compiled ({built[0]})"
    assert not built[0].stat().st_mode & 0o077 and not fresh_build.stat().st_mode & 0o077
    stamp = built[0].stat().st_mtime_ns
    native._mtx_check_build.cache_clear()
    assert native.mtx_checker() is not None  # a second process loads the cached build
    assert built[0].stat().st_mtime_ns == stamp
    # a changed source (another spla version) gets a build of its own
    changed = fresh_build.parent.parent / "mtx_check.c"
    changed.write_bytes(native.MTX_CHECK_SOURCE.read_bytes() + b"\n/* another version */\n")
    monkeypatch.setattr(native, "MTX_CHECK_SOURCE", changed)
    native._mtx_check_build.cache_clear()
    assert native.mtx_checker() is not None
    assert len(list(fresh_build.glob("mtx_check-*.so"))) == 2
    assert not list(fresh_build.glob(".*.tmp"))


def test_no_compiler_means_the_numpy_check(fresh_build, monkeypatch, tmp_path, rng):
    monkeypatch.setenv("CC", str(tmp_path / "no-such-compiler"))
    assert native.mtx_checker() is None
    assert native.status().startswith("unavailable:")
    assert not list(fresh_build.glob("*.so"))
    A = sp.random(40, 30, density=0.2, format="csr", random_state=np.random.default_rng(1))
    path = mmio.write_mtx(tmp_path / "a.mtx", A)
    got, info = mmio.read_mtx_scipy(path)
    assert info["body_check"] == "numpy" and "fast_matrix_market" in info["parser"]
    assert (got != A).nnz == 0


def test_a_failed_build_leaves_nothing_and_falls_back(fresh_build, monkeypatch, tmp_path):
    failing = tmp_path / "cc"
    failing.write_text("#!/bin/sh\necho 'cc: broken' >&2\nexit 3\n")
    failing.chmod(0o755)
    monkeypatch.setenv("CC", str(failing))
    assert native.mtx_checker() is None
    assert "exited with 3" in native.status() and "broken" in native.status()
    assert not list(fresh_build.iterdir())


def test_a_cache_folder_others_can_write_is_not_trusted(fresh_build):
    fresh_build.mkdir(parents=True)
    fresh_build.chmod(0o777)
    assert native.mtx_checker() is None
    assert "writable by other users" in native.status()


def test_spla_native_off(monkeypatch):
    monkeypatch.setenv(native.NATIVE_ENV, "off")
    assert native.mtx_checker() is None and native.status() == "off ($SPLA_NATIVE)"


# --------------------------------------------------------------- the reader on either check
# the body of a 3 x 3 file with 4 entries (lines 3-6), and the line a bad one is refused at
CASES = {
    "valid": (b"1 1 1.5\n2 3 -2e-3\n3 2 .5\n1 3 7\n", None),
    "crlf and tabs": (b"1\t1\t1.5\r\n2 3 -2e-3\r\n3 2 .5\r\n1 3 7\r\n", None),
    "trailing blank lines": (b"1 1 1.5\n2 3 -2e-3\n3 2 .5\n1 3 7\n\n  \n", None),
    "no final newline": (b"1 1 1.5\n2 3 -2e-3\n3 2 .5\n1 3 7", None),
    "blank line between": (b"1 1 1.5\n2 3 -2e-3\n\n3 2 .5\n1 3 7\n", None),
    "two dots": (b"1 1 1.5\n2 3 -2e-3\n3 2 1.2.3\n1 3 7\n", 5),
    "fortran exponent": (b"1 1 1.5\n2 3 1.5D+02\n3 2 .5\n1 3 7\n", 4),
    "hex float": (b"1 1 1.5\n2 3 0x1p3\n3 2 .5\n1 3 7\n", 4),
    "underscore": (b"1 1 1.5\n2 3 1_000.5\n3 2 .5\n1 3 7\n", 4),
    "dotted index": (b"1 1 1.5\n2 3.0 -2e-3\n3 2 .5\n1 3 7\n", 4),
    "extra token": (b"1 1 1.5\n2 3 -2e-3 9\n3 2 .5\n1 3 7\n", 4),
    "NUL byte": (b"1 1 1.5\n2 3 -2e-3\n3 2 .5\x00\n1 3 7\n", 5),
    "exponent then dot": (b"1 1 1.5\n2 3 1e5.3\n3 2 .5\n1 3 7\n", 4),
    "trailing e": (b"1 1 1.5\n2 3 -2e-3\n3 2 .5\n1 3 7e\n", 6),
    "an entry too many": (b"1 1 1.5\n2 3 -2e-3\n3 2 .5\n1 3 7\n2 2 1\n", 7),
    "an entry short": (b"1 1 1.5\n2 3 -2e-3\n3 2 .5\n", 6),
    "trailing space, no newline": (b"1 1 1.5\n2 3 -2e-3\n3 2 .5\n1 3 7 ", None),
}


def outcome(path):
    try:
        A, info = mmio.read_mtx_scipy(path)
    except MatrixFormatError as exc:
        return ("refused", exc.line, str(exc)), None
    return ("loaded", A.toarray().tobytes(), info["parser"]), info["body_check"]


@pytest.mark.parametrize("gz", [False, True], ids=["mtx", "gz"])
@pytest.mark.parametrize("chunk", [8, 13, 1 << 22])
def test_reader_gives_the_same_answer_on_either_check(tmp_path, monkeypatch, chunk, gz):
    """Plain files are checked, then parsed; .gz text is checked as SciPy's reader pulls it (mmio._CheckedText)."""
    compiled()
    monkeypatch.setattr(mmio, "CHUNK_BYTES", chunk)  # lines cut across chunks: the carried line is checked too
    for name, (text, bad_line) in CASES.items():
        path = tmp_path / f"{name.replace(' ', '_').replace(',', '')}.mtx{'.gz' if gz else ''}"
        data = b"%%MatrixMarket matrix coordinate real general\n3 3 4\n" + text
        path.write_bytes(gzip.compress(data) if gz else data)
        with_c, check = outcome(path)
        assert check in ("compiled", None), name
        monkeypatch.setenv(native.NATIVE_ENV, "off")
        with_numpy, check = outcome(path)
        assert check in ("numpy", None), name
        monkeypatch.delenv(native.NATIVE_ENV)
        assert with_c == with_numpy, name
        if bad_line is None:
            assert with_c[0] == "loaded", (name, with_c)
            if name in ("valid", "crlf and tabs", "trailing blank lines", "no final newline"):
                assert "fast_matrix_market" in with_c[2], (name, with_c)  # checked, not sent to the scanner
        else:
            assert with_c[:2] == ("refused", bad_line), (name, with_c)


def test_buffer_slices_are_checked_in_place():
    """The reader hands the check slices of a larger buffer: only the slice is looked at."""
    function = compiled()
    text = b"1 2 3.5\n4 5 6\nx"
    assert native.check_lines(function, memoryview(text)[:8], 3, 2, True) == 3
    assert native.check_lines(function, memoryview(text)[:14], 3, 2, True) == 6
    assert native.check_lines(function, memoryview(bytearray(text))[8:14], 3, 2, True) == 3
    assert native.check_lines(function, memoryview(text), 3, 2, True) == -1


@pytest.mark.parametrize("gz", [False, True], ids=["mtx", "gz"])
def test_a_line_longer_than_any_entry_goes_to_the_scanner(tmp_path, monkeypatch, gz):
    """The check stops carrying a line past LONGEST_LINE (no quadratic growth); the scanner reads it right."""
    monkeypatch.setattr(mmio, "CHUNK_BYTES", 16)
    monkeypatch.setattr(mmio, "LONGEST_LINE", 100)
    short = b"%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.5\n3 2 " + b"0" * 90 + b"25\n"
    long = short.replace(b"0" * 90, b"0" * 200)
    for text, parser in ((short, "fast_matrix_market"), (long, "line scanner")):
        path = tmp_path / ("m.mtx.gz" if gz else "m.mtx")
        path.write_bytes(gzip.compress(text) if gz else text)
        A, info = mmio.read_mtx_scipy(path)
        assert parser in info["parser"]
        np.testing.assert_array_equal(A.toarray(), [[1.5, 0, 0], [0, 0, 0], [0, 25, 0]])
