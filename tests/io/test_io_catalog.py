"""The shipped matrix catalogue: parses, unique, complete, lookups and local paths."""

from __future__ import annotations

import json

import pytest

from spla import InputError, SplaError
from spla.io import catalog

ISSUE_LIST = ["SNAP/web-Google", "SNAP/web-Stanford", "SNAP/web-NotreDame", "SNAP/soc-LiveJournal1",
              "SNAP/roadNet-CA", "SNAP/com-Orkut", "SNAP/amazon0312", "SNAP/cit-Patents", "Williams/webbase-1M",
              "Williams/cant", "Williams/pdb1HYS", "Williams/consph", "Williams/mac_econ_fwd500",
              "Williams/cop20k_A", "Williams/mc2depi", "Boeing/pwtk", "Hamm/scircuit", "DNVS/shipsec1",
              "GHS_psdef/ldoor", "Janna/Queen_4147"]
WILLIAMS_14 = ["dense2", "pdb1HYS", "consph", "cant", "pwtk", "rma10", "conf5_4-8x8-05", "shipsec1",
               "mac_econ_fwd500", "mc2depi", "cop20k_A", "scircuit", "webbase-1M", "rail4284"]


@pytest.fixture(scope="module")
def shipped():
    return catalog.load_catalog()


def test_catalogue_holds_the_issue_list_and_the_williams_set(shipped):
    for full_name in ISSUE_LIST:
        assert shipped.get(full_name).full_name == full_name
    williams = [entry.name for entry in shipped.suite("williams")]
    assert sorted(williams) == sorted(WILLIAMS_14)


def test_entries_are_unique_and_complete(shipped):
    names = [entry.name.lower() for entry in shipped]
    assert len(names) == len(set(names))
    raw = json.loads(catalog.catalog_path().read_text())
    for item in raw["matrices"]:
        for key in catalog.REQUIRED_FIELDS:
            assert key in item, (item["name"], key)
    for entry in shipped:
        assert entry.rows > 0 and entry.cols > 0 and entry.nnz > 0 and entry.explicit_zeros >= 0
        assert entry.nnz <= entry.rows * entry.cols
        lo, hi = entry.header_nnz_range()
        assert 0 < lo <= hi <= entry.nnz + entry.explicit_zeros
        if entry.header_nnz is not None:
            assert lo <= entry.header_nnz <= hi, entry.name
        if entry.url:
            assert entry.url.endswith(f"/MM/{entry.group}/{entry.name}.tar.gz")
            assert entry.url.startswith("https://")
        else:
            assert entry.generator.startswith("gen:")
        if entry.symmetry == "symmetric":
            assert entry.rows == entry.cols


def test_stand_ins_are_valid_generator_specs(shipped):
    from spla.io import generators

    for entry in shipped:
        for spec in filter(None, (entry.stand_in, entry.generator)):
            generators.parse_spec(spec)


def test_symmetric_header_ranges_follow_the_stored_triangle(shipped):
    cant = shipped.get("cant")
    assert cant.header_nnz_range() == (2_034_917, 2_034_917)
    ldoor = shipped.get("ldoor")
    lo, hi = ldoor.header_nnz_range()
    assert lo == (42_493_817 + 1) // 2 and hi == (42_493_817 + 4_028_658 + 952_203) // 2


def test_lookup_by_name_group_alias_and_case(shipped):
    assert shipped.get("web-google") is shipped.get("SNAP/web-Google")
    assert shipped.get("qcd5_4").name == "conf5_4-8x8-05"
    with pytest.raises(InputError, match="did you mean web-Google"):
        shipped.get("web-Gogle")
    with pytest.raises(InputError, match="no catalogue suite"):
        shipped.suite("nonesuch")


def test_module_level_get_and_local_path(tmp_path, monkeypatch):
    assert catalog.get("web-Google").rows == 916_428
    assert catalog.local_path("not-a-matrix") is None
    monkeypatch.setenv("SPLA_MATRICES", str(tmp_path))
    assert catalog.local_path("SNAP/web-Google") == tmp_path / "web-Google.mtx"
    (tmp_path / "web-Google.mtx.gz").write_bytes(b"")
    assert catalog.local_path("web-Google") == tmp_path / "web-Google.mtx.gz"


def test_bad_catalogue_files_fail_with_the_path(tmp_path):
    bad = tmp_path / "catalog.json"
    bad.write_text("{ not json")
    with pytest.raises(SplaError, match="not valid JSON"):
        catalog.load_catalog(bad)
    entry = {"name": "x", "group": "G", "url": "https://h/MM/G/x.tar.gz", "rows": 1, "cols": 1, "nnz": 1,
             "explicit_zeros": 0, "header_nnz": 1, "nnz_verified": True, "symmetry": "general",
             "field": "real", "kind": "k", "suites": []}
    bad.write_text(json.dumps({"matrices": [entry, dict(entry, group="H")]}))
    with pytest.raises(SplaError, match="names two entries"):
        catalog.load_catalog(bad)
    bad.write_text(json.dumps({"matrices": [{k: v for k, v in entry.items() if k != "nnz"}]}))
    with pytest.raises(SplaError, match="lacks nnz"):
        catalog.load_catalog(bad)
