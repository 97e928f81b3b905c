"""The host side of tuning: which kernels to try, and the persistent cache.

``spla.tune(A)`` (measuring: :mod:`spla.bench.tune`) times a short list of
kernels on the actual matrix and keeps the fastest. This module decides the
list (:func:`candidates`: the rule's choice first, then the plausible
alternatives) and remembers winners across processes in a small JSON file
(:class:`TuneCache`), keyed by a :func:`fingerprint` of the matrix and the GPU.

``spla.tune(A, k=k)`` does the same for SpMM at k columns
(:func:`spmm_candidates`); its winner is what ``spla.spmm``'s ``auto`` runs on A
at that k, stored per k beside the SpMV's (its own cache key, :func:`spmm_key`).

Tuning is off by default: ``kernel="auto"`` never measures, it takes the rule
of :func:`spla.planning.spmv.choose_kernel`, or a winner found in the tuning
cache by an earlier ``spla.tune`` / ``kernel="tune"``. So results and speed
never depend on timing noise unless a user asked for tuning once. Any kernel
gives the same product to rounding, and a candidate is only accepted after its
result matched the rule's choice, so tuning changes speed, never answers.

The cache lives at ``$SPLA_TUNE_CACHE`` when set (a file path; ``off``
disables reading and writing), else ``$XDG_CACHE_HOME/spla/tune.json``, else
``~/.cache/spla/tune.json``. A corrupt or unwritable file is ignored with a
warning; it never raises.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from ..errors import KernelError
from . import blocked, dia, rle, segmented
from . import spmm as spmm_planning
from .spmv import (
    AUTO,
    AUTO_CHOICE_KEY,
    AUTO_SOURCE_KEY,
    BOUND_KEY,
    LANE_WIDTHS,
    SPMM_BOUND_KEY,
    STRUCTURES,
    bound_param,
    parse_kernel,
    rule_kernel,
    x_bytes_of,
)
from .stats import host_indptr, row_stats

CACHE_ENV = "SPLA_TUNE_CACHE"
CACHE_FORMAT = 1
# Entries kept in the file: the oldest go first (a winner is a few hundred bytes).
CACHE_ENTRIES = 2000
# The tuner's default cost: at most this many timed products (SpMVs, or SpMMs), and this much device time.
MAX_CALLS = 50
BUDGET_MS = 30.0
# Row-length histogram bins of the fingerprint: 0, 1, 2-3, 4-7, ... (powers of two).
HISTOGRAM_BINS = 24

# Tuned choices go where spla.planning.spmv.choose_kernel reads them (AUTO_CHOICE_KEY, AUTO_SOURCE_KEY).
FINGERPRINT_KEY = "tune-fingerprint"
LOOKED_UP_KEY = "tune-cache-looked-up"


# ------------------------------------------------------------- candidates
def _widths_around(width: int) -> list[int]:
    """The lane width and its neighbours in LANE_WIDTHS (2-3 widths)."""
    i = LANE_WIDTHS.index(width)
    return [LANE_WIDTHS[j] for j in (i, i - 1, i + 1) if 0 <= j < len(LANE_WIDTHS)]


VENDOR_MIN_NNZ = 2**20


def tuner_times(A, family: str, stats=None) -> bool:
    """Whether the tuner times a structured family (dia, band, rle) on A, and trusts a cached winner of
    it: where auto would run it, and rle from shorter runs than auto's (rle.TUNE_MIN_RUN).
    ``scripts/bench_corpus.py`` times them where this says, so its records can be replayed under a
    later cut."""
    if family == "rle":
        return rle.applies(A, stats, min_run=rle.TUNE_MIN_RUN)
    return STRUCTURES[family].applies(A, stats)


def candidates(A) -> list[str]:
    """The kernels the tuner times on A, the rule's choice first.

    Alternatives: ``scalar`` (only when no row exceeds ``AUTO.long_row``: one
    thread walking a long row is never competitive), ``warp`` and ``vector``
    at the lanes rule's width and its two neighbours, ``adaptive2`` and
    ``adaptive`` (the best spla kernel on some skewed graphs where auto's
    ``adaptive2`` is not), ``segmented`` at every K the dtype takes, ``staged``
    at every T within its shared memory bound, ``blocked`` where x is large enough
    for auto to block it (``AUTO.blocked_x_bytes``, more than one column block; the
    first timing regroups a copy of A), ``dia``
    at every rows a thread (``dia:R``) where A's regular rows lie on a few
    diagonals (spla.planning.dia), ``band`` in place of ``warp`` where every
    row is one run of columns (the same mapping, fewer bytes:
    spla.planning.band), ``rle`` beside ``warp`` where rows are made of runs
    long enough that their bytes may pay (from ``rle.TUNE_MIN_RUN``, shorter
    than auto's cut: the same mapping with fewer bytes, plus a walk over the
    runs: spla.planning.rle), and from
    :data:`VENDOR_MIN_NNZ` nonzeros cuSPARSE's CSR ALG1 and ALG2
    (``cusparse:1``, which auto runs on large irregular matrices, and the
    deterministic ``cusparse:2``, up to 12% faster on some float64 ones; on
    smaller matrices their fixed cost of several microseconds never wins).
    Names carry their parameter (``"warp:8"``), so a winner is
    one exact configuration. An empty matrix has one candidate.
    """
    s = row_stats(A)
    rule = rule_kernel(A)
    if s.nnz == 0 or s.n_rows == 0:
        return [rule]
    names = [rule]
    if s.max <= AUTO.long_row:
        names.append("scalar")
    banded = tuner_times(A, "band", s)
    row_families = ["vector", "band" if banded else "warp"]
    if not banded and tuner_times(A, "rle", s):
        row_families.append("rle")
    for family in row_families:
        centre = bound_param(A, family, None)  # the lanes rule's width
        assert centre is not None
        names += [f"{family}:{w}" for w in _widths_around(centre)]
    names += ["adaptive2", "adaptive"]
    names += [f"segmented:{k}" for k in sorted(segmented.segmented_entries(A.dtype), reverse=True)]
    names += [f"staged:{t}" for t in sorted(segmented.staged_entries(A.dtype), reverse=True)]
    if blocked.n_blocks(A.n_cols) > 1 and x_bytes_of(A) >= AUTO.blocked_x_bytes:
        names.append("blocked")
    if tuner_times(A, "dia", s):
        names += [f"dia:{r}" for r in dia.rows_choices(A.dtype)]
    if s.nnz >= VENDOR_MIN_NNZ:
        names += ["cusparse:1", "cusparse:2"]
    # "vector" and "vector:8" can name one configuration: keep the first spelling
    unique: dict[str, str] = {}
    for name in names:
        unique.setdefault(_canonical(A, name), name)
    return list(unique.values())


def _canonical(A, name: str) -> str:
    family, param = parse_kernel(name)
    param = bound_param(A, family, param)
    return family if param is None else f"{family}:{param}"


# ------------------------------------------------------------ fingerprint
def row_histogram(lengths: np.ndarray) -> list[int]:
    """Counts of rows of length 0, 1, 2-3, 4-7, ... (the last bin takes the rest)."""
    bins = np.zeros(lengths.shape[0], dtype=np.int64)
    positive = lengths > 0
    bins[positive] = np.minimum(np.floor(np.log2(lengths[positive])).astype(np.int64) + 1, HISTOGRAM_BINS - 1)
    return np.bincount(bins, minlength=HISTOGRAM_BINS).tolist()


def fingerprint_fields(A, device_name: str) -> dict:
    """What identifies a tuning problem: A's structure, its types, the GPU, spla's version and the
    build of its kernels (:func:`spla.kernel_files.digest`: a winner measured on other kernels is not
    reused).

    The column indices are not hashed (that would read the whole matrix):
    two matrices with one row pointer share a winner, which is still a
    correct kernel for both, only perhaps not the fastest.
    """
    from .. import __version__, kernel_files

    indptr = host_indptr(A)
    return {"shape": [int(A.shape[0]), int(A.shape[1])], "nnz": int(A.nnz),
            "rows": row_histogram(np.diff(indptr)),
            "indptr": hashlib.blake2b(np.ascontiguousarray(indptr).tobytes(), digest_size=16).hexdigest(),
            "dtype": np.dtype(A.dtype).name, "index_dtype": np.dtype(A.index_dtype).name,
            "gpu": str(device_name), "spla": __version__, "kernels": kernel_files.digest()}


def fingerprint(A, device_name: str) -> str:
    """A hex key for A on one GPU (cached on A per GPU name)."""
    cached = A._cache.get(FINGERPRINT_KEY)
    if cached is not None and cached[0] == device_name:
        return cached[1]
    fields = fingerprint_fields(A, device_name)
    key = hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()
    A._cache[FINGERPRINT_KEY] = (device_name, key)
    return key


# ------------------------------------------------------------------ cache
def cache_path() -> Path | None:
    """The tuning cache file, or None when ``$SPLA_TUNE_CACHE`` is ``off``."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return None if explicit.lower() in ("off", "0", "none", "false") else Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "spla" / "tune.json"


class TuneCache:
    """The persistent tuning cache: ``{fingerprint: entry}`` in one JSON file.

    Reads and writes never raise: a missing file is empty, a corrupt or
    unreadable one is empty with a warning, a failed write warns and is
    dropped. Writes go to a temporary file in the same folder, then
    ``os.replace``, so a reader never sees half a file.
    """

    def __init__(self, path: Path | None = None):
        self.path = cache_path() if path is None else Path(path)

    def load(self) -> dict:
        """Every entry, ``{}`` when absent, disabled, corrupt or unreadable."""
        if self.path is None or not self.path.exists():
            return {}
        try:
            with open(self.path, encoding="utf-8") as f:
                content = json.load(f)
            if not isinstance(content, dict) or content.get("format") != CACHE_FORMAT:
                raise ValueError(f"not a format-{CACHE_FORMAT} spla tuning cache")
            entries = content.get("entries")
            if not isinstance(entries, dict):
                raise ValueError("no entries")
            return {k: v for k, v in entries.items() if isinstance(v, dict) and isinstance(v.get("kernel"), str)}
        except (OSError, ValueError) as exc:  # json.JSONDecodeError is a ValueError
            warnings.warn(f"ignoring the spla tuning cache {self.path}: {exc}", RuntimeWarning, stacklevel=2)
            return {}

    def lookup(self, key: str) -> dict | None:
        return self.load().get(key)

    def store(self, key: str, entry: dict) -> bool:
        """Add or replace one entry (keeping the newest CACHE_ENTRIES); False when it could not be written."""
        if self.path is None:
            return False
        entries = self.load()
        entries.pop(key, None)
        entries[key] = {**entry, "stored": time.time()}
        if len(entries) > CACHE_ENTRIES:
            newest = sorted(entries, key=lambda k: entries[k].get("stored", 0.0))[-CACHE_ENTRIES:]
            entries = {k: entries[k] for k in newest}
        tmp = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tune-", suffix=".json", dir=self.path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({"format": CACHE_FORMAT, "entries": entries}, f, indent=0, sort_keys=True)
            os.replace(tmp, self.path)
            return True
        except OSError as exc:
            warnings.warn(f"could not write the spla tuning cache {self.path}: {exc}", RuntimeWarning, stacklevel=2)
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
            return False


def holders(A) -> list:
    """A and the copies of it on the other side whose choice must agree."""
    found = {id(m): m for m in (A, A._cache.get("host"), A._cache.get("device")) if m is not None}
    return list(found.values())


def set_choice(A, kernel: str, source: str) -> None:
    """Record ``kernel`` as what ``auto`` runs on A (and its host/device copies)."""
    for m in holders(A):
        m._cache[AUTO_CHOICE_KEY] = kernel
        m._cache[AUTO_SOURCE_KEY] = source
        bound = m._cache.get(BOUND_KEY)
        if bound:  # a launcher bound for the old choice must not keep running
            bound.pop("auto", None)
            bound.pop("tune", None)
        m._cache.pop(SPMM_BOUND_KEY, None)  # SpMM's auto at k = 1 runs the SpMV's choice


def is_tuned(A) -> bool:
    """Whether auto's choice for A comes from a measurement (``spla.tune`` here, or a hit in the
    tuning cache), not from the rule."""
    return A._cache.get(AUTO_SOURCE_KEY) in ("measured", "cached")


def apply_cached(A, device_name: str, cache: TuneCache | None = None) -> str | None:
    """Set A's ``auto`` choice from the tuning cache; the kernel, or None on a miss.

    Looks once per matrix and only when the cache file exists, so untuned
    users pay nothing (not even the fingerprint).
    """
    if is_tuned(A) or A._cache.get(LOOKED_UP_KEY) == device_name:
        return None
    for m in holders(A):
        m._cache[LOOKED_UP_KEY] = device_name
    cache = TuneCache() if cache is None else cache
    if cache.path is None or not cache.path.exists():
        return None
    entry = cache.lookup(fingerprint(A, device_name))
    if entry is None:
        return None
    kernel = entry["kernel"]
    try:
        family = parse_kernel(kernel)[0]
    except KernelError:  # a name from another spla version: ignore the entry
        return None
    # the fingerprint does not read the column indices: a matrix sharing another's row pointer
    # may not have the structure that made dia, band or rle win there
    if family in STRUCTURES and not tuner_times(A, family):
        return None
    set_choice(A, kernel, "cached")
    return kernel


# ------------------------------------------------------------------ SpMM
# fused's two segment lengths (spla.planning.spmm.fused_segment_nnz picks one by size): the tuner times
# the other one too, where some row is longer than the shorter (session 63: 256 won up to 1.69x at 8M
# nonzeros on float64 k = 64 power laws and lost elsewhere; session 64: 1,024 loses at 100K-600K).
SPMM_SEGMENTS_TRIED = (spmm_planning.SHORT_SEGMENT_NNZ, spmm_planning.SEGMENT_NNZ)
SPMM_LOOKED_UP_KEY = "spmm-tune-cache-looked-up"  # {k} already looked up on A (a device matrix: one GPU)


def spmm_candidates(A, k: int) -> list[str]:
    """The SpMM kernels ``spla.tune(A, k=k)`` times on A, the rule's choice first.

    Alternatives: ``regk`` (k <= 16), ``subwarp``, ``warp``, ``adaptive``,
    ``fused`` where it runs its own kernel at this k, and ``fused:N`` for the
    length of :data:`SPMM_SEGMENTS_TRIED` that is not fused's default on A, where
    a row is longer than the shorter of them, ``dia`` where A's
    rows lie on a few diagonals, and from :data:`VENDOR_MIN_NNZ` nonzeros
    ``cusparse`` (the fastest of cuSPARSE's CSR algorithms, as the benchmarks'
    anchor). An empty matrix has one candidate.
    """
    k = int(k)
    s = row_stats(A)
    rule = spmm_planning.rule_kernel(A, k)
    if s.nnz == 0 or s.n_rows == 0:
        return [rule]
    names = [rule]
    if k <= spmm_planning.REGK_MAX_K:
        names.append("regk")
    names += ["subwarp", "warp", "adaptive"]
    if k <= spmm_planning.REGK_MAX_K or spmm_planning.fused_wide_lanes(k, A.dtype):
        names.append("fused")
        if s.max > min(SPMM_SEGMENTS_TRIED):  # else both lengths give one schedule
            default = spmm_planning.fused_segment_nnz(s.nnz)
            names += [f"fused:{n}" for n in SPMM_SEGMENTS_TRIED if n != default]
    if tuner_times(A, "dia", s):
        names.append("dia")
    if s.nnz >= VENDOR_MIN_NNZ:
        names.append("cusparse")
    return list(dict.fromkeys(names))


def spmm_key(A, k: int, device_name: str) -> str:
    """The tuning cache's key for SpMM on A at k columns on one GPU."""
    return f"{fingerprint(A, device_name)}:spmm:{int(k)}"


def set_spmm_choice(A, k: int, kernel: str, source: str) -> None:
    """Record ``kernel`` as what SpMM's ``auto`` runs on A (and its host/device copies) at k columns."""
    for m in holders(A):
        m._cache.setdefault(spmm_planning.TUNED_KEY, {})[int(k)] = (kernel, source)
        m._cache.pop(SPMM_BOUND_KEY, None)  # a launcher bound for the old choice must not keep running


def apply_cached_spmm(A, k: int, device_name: str | None = None, cache: TuneCache | None = None) -> str | None:
    """Set the device matrix A's SpMM ``auto`` choice at k from the tuning cache; the kernel, or None on
    a miss. Looks once per (matrix, k) and only when the cache file exists; ``device_name`` (None: the
    current GPU's, asked only then) names the GPU."""
    k = int(k)
    looked_up = A._cache.setdefault(SPMM_LOOKED_UP_KEY, set())
    if spmm_planning.tuned_choice(A, k) or k in looked_up:
        return None
    looked_up.add(k)
    cache = TuneCache() if cache is None else cache
    if cache.path is None or not cache.path.exists():
        return None
    if device_name is None:
        from ..device import device_name as current_device

        device_name = current_device()
    entry = cache.lookup(spmm_key(A, k, device_name))
    if entry is None:
        return None
    kernel = entry["kernel"]
    try:
        family = spmm_planning.parse_spmm_kernel(kernel)[0]
    except KernelError:  # a name from another spla version: ignore the entry
        return None
    if family == "dia" and not tuner_times(A, "dia"):  # the fingerprint does not read the column indices
        return None
    set_spmm_choice(A, k, kernel, "cached")
    return kernel
