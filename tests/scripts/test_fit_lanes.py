"""scripts/fit_lanes.py on canned corpus records: the fill threshold is fitted on the fit half only."""

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


def _record(name, half, n_rows, wider_wins, bare=True):
    """Rows of 3 (warp's rule: 2 lanes) timed at 2 and 4 lanes: 4 is faster when ``wider_wins``.
    ``bare``: the rule's width spelled as the bare name, as records before session 13 did."""
    fast, slow = 5.0, 10.0
    candidates = [{"kernel": "warp" if bare else "warp:2", "status": "ok", "us": slow if wider_wins else fast},
                  {"kernel": "warp:4", "status": "ok", "us": fast if wider_wins else slow}]
    if not bare:
        candidates[0]["param"] = 2
    return {"name": name, "half": half, "dtype": "float32", "status": "ok",
            "row_stats": {"n_rows": n_rows, "nnz": 3 * n_rows, "mean": 3.0, "std": 0.0, "cv": 0.0, "max": 3,
                          "empty": 0},
            "tune": {"candidates": candidates}}


def test_the_threshold_separates_the_fit_half_and_ignores_the_report_half(tmp_path):
    records = [_record(f"few{n}", "fit", n, True) for n in (1000, 5000, 20000)]
    records += [_record(f"many{n}", "fit", n, False, bare=False) for n in (200000, 500000)]
    # held out: would pull the threshold up, were they used
    records += [_record(f"held{n}", "report", n, True) for n in (300000, 400000)]
    path = tmp_path / "corpus.json"
    path.write_text(json.dumps({"records": records}))
    items = fit_lanes.load([path])
    assert len(items) == 7 and {i["rule"] for i in items} == {2}
    fill = fit_lanes.fit(items)
    assert 20000 * 2 < fill <= 200000 * 2
    fit_items = [i for i in items if i["half"] == "fit"]
    assert all(fit_lanes.quality(i, fill) == 1.0 for i in fit_items)
    assert all(fit_lanes.quality(i, fill) == 0.5 for i in items if i["half"] == "report")
    assert fit_lanes.main([str(path)]) == 0
