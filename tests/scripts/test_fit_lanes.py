"""scripts/fit_lanes.py on canned corpus records: the thresholds are fitted on the fit half only."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))
spec = importlib.util.spec_from_file_location("fit_lanes", SCRIPTS / "fit_lanes.py")
fit_lanes = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fit_lanes)


def _record(name, half, n_rows, wider_wins, bare=True, mean=3, near=1.0):
    """Rows of ``mean`` (3: warp's rule takes 2 lanes; 16: 8) timed at the rule's width and twice
    it: the wider is faster when ``wider_wins``. ``bare``: the rule's width spelled as the bare
    name, as records before session 13 did; ``near``: the recorded near share."""
    rule = 2 if mean < 8 else 8
    fast, slow = 5.0, 10.0
    candidates = [{"kernel": "warp" if bare else f"warp:{rule}", "status": "ok", "us": slow if wider_wins else fast},
                  {"kernel": f"warp:{2 * rule}", "status": "ok", "us": fast if wider_wins else slow}]
    if not bare:
        candidates[0]["param"] = rule
    return {"name": name, "half": half, "dtype": "float32", "status": "ok", "near_share": near,
            "matrix": {"rows": n_rows, "cols": n_rows, "nnz": mean * n_rows},
            "row_stats": {"n_rows": n_rows, "nnz": mean * n_rows, "mean": float(mean), "std": 0.0, "cv": 0.0,
                          "max": mean, "empty": 0},
            "tune": {"candidates": candidates}}


def test_the_threshold_separates_the_fit_half_and_ignores_the_report_half(tmp_path):
    records = [_record(f"few{n}", "fit", n, True) for n in (1000, 5000, 20000)]
    records += [_record(f"many{n}", "fit", n, False, bare=False) for n in (200000, 500000)]
    # held out: would pull the threshold up, were they used
    records += [_record(f"held{n}", "report", n, True) for n in (300000, 400000)]
    path = tmp_path / "corpus.json"
    path.write_text(json.dumps({"records": records}))
    items = fit_lanes.load([path])
    assert len(items) == 7 and {min(i["times"]) for i in items} == {2}
    share, fill = fit_lanes.fit(items)
    assert 20000 * 2 < fill <= 200000 * 2 and share == 0.0  # every near share is 1: none scattered
    fit_items = [i for i in items if i["half"] == "fit"]
    assert all(fit_lanes.quality(i, fill, share) == 1.0 for i in fit_items)
    assert all(fit_lanes.quality(i, fill, share) == 0.5 for i in items if i["half"] == "report")
    assert fit_lanes.main([str(path)]) == 0


def test_the_scattered_share_splits_rows_of_scattered_columns_from_near_ones(tmp_path):
    """Rows of 16 on many rows (no doubling): one step a row (16 lanes) wins where the columns are
    scattered (near shares 0.01-0.05), the rule's 8 lanes where they are near (0.4-0.9); the held-out
    near share of 0.3 would pull the threshold up, were it used."""
    many = 10**7
    records = [_record(f"scattered{k}", "fit", many, True, mean=16, near=near) for k, near in enumerate((0.01, 0.05))]
    records += [_record(f"near{k}", "fit", many, False, mean=16, near=near) for k, near in enumerate((0.4, 0.9))]
    records += [_record("held", "report", many, True, mean=16, near=0.3)]
    path = tmp_path / "corpus.json"
    path.write_text(json.dumps({"records": records}))
    items = fit_lanes.load([path])
    share, fill = fit_lanes.fit(items)
    assert 0.05 < share < 0.4
    assert {i["name"]: fit_lanes.picked(i, fill, share) for i in items} == {
        "scattered0": 16, "scattered1": 16, "near0": 8, "near1": 8, "held": 8}


def test_vector_takes_4_lanes_on_float32_rows_of_28_as_the_code_does(tmp_path):
    """The picks score vector_widens (session 49): float32 rows of 30 that the lanes rule gives 2
    lanes take 4 unless nearly every neighbouring pair of columns is close."""
    many = 10**7

    def vector_record(name, near):
        candidates = [{"kernel": f"vector:{w}", "param": w, "status": "ok", "us": us}
                      for w, us in ((2, 10.0), (4, 5.0))]
        return {"name": name, "half": "fit", "dtype": "float32", "status": "ok", "near_share": near,
                "matrix": {"rows": many, "cols": many, "nnz": 30 * many},
                "row_stats": {"n_rows": many, "nnz": 30 * many, "mean": 30.0, "std": 0.0, "cv": 0.0, "max": 30,
                              "empty": 0},
                "tune": {"candidates": candidates}}

    path = tmp_path / "corpus.json"
    path.write_text(json.dumps({"records": [vector_record("knn", 0.5), vector_record("band", 0.99)]}))
    items = {i["name"]: i for i in fit_lanes.load([path]) if i["family"] == "vector"}
    fill, share = fit_lanes.FILL_THREADS, fit_lanes.SCATTERED_NEAR
    assert fit_lanes.lanes_for(30.0, 4) == 2
    assert fit_lanes.picked(items["knn"], fill, share) == 4 and fit_lanes.quality(items["knn"], fill, share) == 1.0
    assert fit_lanes.picked(items["band"], fill, share) == 2
