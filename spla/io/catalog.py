"""The catalogue of named SuiteSparse/SNAP matrices (``matrices/catalog.json``).

Each entry gives a matrix's SuiteSparse group and name, the URL of its
Matrix Market ``.tar.gz``, the collection's rows/cols/nnz, symmetry, field
and kind, the entry count its ``.mtx`` size line should carry, and a
``gen:`` stand-in of similar shape for machines without the network. Look
entries up by ``NAME`` (``web-Google``), ``GROUP/NAME`` (``SNAP/web-Google``)
or an alias (``qcd5_4``), case-insensitively.

The catalogue ships in the wheel as package data of ``spla.matrices``; in a
source checkout it is read from ``matrices/catalog.json`` beside ``spla/``.
Fetched matrices live in ``matrices/`` under the current directory unless
``$SPLA_MATRICES`` names another folder (:func:`matrices_dir`).
"""

from __future__ import annotations

import difflib
import functools
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError, SplaError

CATALOG_FILE = "catalog.json"
REQUIRED_FIELDS = ("name", "group", "rows", "cols", "nnz", "explicit_zeros", "header_nnz", "nnz_verified",
                   "symmetry", "field", "kind", "suites")
SYMMETRIES = ("general", "symmetric", "skew-symmetric", "hermitian")
FIELDS = ("real", "integer", "pattern", "complex")


@dataclass(frozen=True)
class Entry:
    """One named matrix. Figures are the collection's; see ``catalog.json``'s description."""

    name: str
    group: str
    url: str | None
    rows: int
    cols: int
    nnz: int
    explicit_zeros: int
    header_nnz: int | None
    nnz_verified: bool
    symmetry: str
    field: str
    kind: str
    suites: tuple = ()
    stand_in: str | None = None
    generator: str | None = None
    aliases: tuple = ()
    description: str = ""
    note: str = ""

    @property
    def full_name(self) -> str:
        return f"{self.group}/{self.name}"

    @property
    def file_name(self) -> str:
        return f"{self.name}.mtx"

    def header_nnz_range(self) -> tuple[int, int]:
        """Entry counts on the size line that agree with the catalogue.

        Exact when ``nnz_verified``; otherwise every count consistent with
        the stored entries (nonzeros plus explicit zeros) under the symmetry:
        a symmetric file stores one triangle and the diagonal once, so it
        holds between half the entries and half the entries plus the rows.
        """
        if self.nnz_verified and self.header_nnz is not None:
            return self.header_nnz, self.header_nnz
        stored = self.nnz + self.explicit_zeros
        if self.symmetry == "general":
            return self.nnz, stored
        return math.ceil(self.nnz / 2), (stored + min(self.rows, self.cols)) // 2

    def as_dict(self) -> dict:
        out = {name: getattr(self, name) for name in self.__dataclass_fields__}
        out["suites"], out["aliases"] = list(self.suites), list(self.aliases)
        return out


def _entry_from_json(raw: dict, where: str) -> Entry:
    missing = [name for name in REQUIRED_FIELDS if name not in raw]
    if missing:
        raise SplaError(f"{where}: entry {raw.get('name', '?')!r} lacks {', '.join(missing)}")
    if not raw.get("url") and not raw.get("generator"):
        raise SplaError(f"{where}: entry {raw['name']!r} has neither a url nor a generator")
    if raw["symmetry"] not in SYMMETRIES or raw["field"] not in FIELDS:
        raise SplaError(f"{where}: entry {raw['name']!r} has symmetry {raw['symmetry']!r} / field {raw['field']!r}")
    known = set(Entry.__dataclass_fields__)
    unknown = set(raw) - known
    if unknown:
        raise SplaError(f"{where}: entry {raw['name']!r} has unknown fields {sorted(unknown)}")
    values = dict(raw)
    values["suites"] = tuple(raw.get("suites", ()))
    values["aliases"] = tuple(raw.get("aliases", ()))
    return Entry(**values)


@dataclass
class Catalog:
    """Entries in catalogue order, with lookups by name, GROUP/NAME and alias."""

    entries: list
    path: Path | None = None
    _index: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        for entry in self.entries:
            for key in (entry.name, entry.full_name, *entry.aliases):
                folded = key.lower()
                if folded in self._index and self._index[folded] is not entry:
                    raise SplaError(f"{self.path or 'catalogue'}: {key!r} names two entries")
                self._index[folded] = entry

    def __iter__(self):
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, key) -> bool:
        return isinstance(key, str) and key.lower() in self._index

    def get(self, key: str) -> Entry:
        """The entry for NAME, GROUP/NAME or an alias; InputError with suggestions otherwise."""
        entry = self._index.get(str(key).lower())
        if entry is None:
            close = difflib.get_close_matches(str(key).lower(), list(self._index), n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(self._index[c].name for c in close)}?" if close else ""
            raise InputError(f"{key!r} is not in the matrix catalogue{hint} (see `spla fetch --list`)")
        return entry

    def suite(self, name: str) -> list:
        """The entries tagged with a suite name (``williams``, ``snap``, ``graphs``, ``large``)."""
        chosen = [entry for entry in self.entries if name.lower() in entry.suites]
        if not chosen:
            suites = sorted({s for entry in self.entries for s in entry.suites})
            raise InputError(f"no catalogue suite {name!r}; the suites are {', '.join(suites)}")
        return chosen


def catalog_path() -> Path:
    """Where the catalogue is read from: the installed package data, else the checkout's matrices/."""
    try:
        from importlib.resources import files

        resource = files("spla.matrices") / CATALOG_FILE
        if resource.is_file():
            return Path(str(resource))
    except (ModuleNotFoundError, TypeError, AttributeError):
        pass
    return Path(__file__).resolve().parents[2] / "matrices" / CATALOG_FILE


def load_catalog(path=None) -> Catalog:
    """Parse a catalogue file (default: :func:`catalog_path`)."""
    path = Path(path) if path is not None else catalog_path()
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SplaError(f"the matrix catalogue is missing: {path}") from None
    except json.JSONDecodeError as exc:
        raise SplaError(f"{path}:{exc.lineno}: the matrix catalogue is not valid JSON ({exc.msg})") from None
    return Catalog([_entry_from_json(item, str(path)) for item in raw.get("matrices", [])], path=path)


@functools.lru_cache(maxsize=1)
def default_catalog() -> Catalog:
    return load_catalog()


def get(key: str) -> Entry:
    """The shipped catalogue's entry for NAME, GROUP/NAME or alias (InputError if unknown)."""
    return default_catalog().get(key)


def entries() -> list:
    return list(default_catalog())


def matrices_dir(dest_dir=None) -> Path:
    """The folder fetched matrices live in: ``dest_dir``, else ``$SPLA_MATRICES``, else ./matrices."""
    if dest_dir is not None:
        return Path(dest_dir)
    return Path(os.environ.get("SPLA_MATRICES", "matrices"))


def local_path(key: str, dest_dir=None) -> Path | None:
    """Where a catalogue matrix is, or would be, on disk: ``DIR/NAME.mtx`` (or ``.mtx.gz`` if only that exists).

    None when ``key`` is not a catalogue name.
    """
    if key not in default_catalog():
        return None
    entry = default_catalog().get(key)
    folder = matrices_dir(dest_dir)
    plain = folder / entry.file_name
    packed = folder / (entry.file_name + ".gz")
    if not plain.is_file() and packed.is_file():
        return packed
    return plain
