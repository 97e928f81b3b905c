"""scripts/fit_staged.py on canned corpus records: the tile-count threshold from the fit half only."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "fit_staged.py"
spec = importlib.util.spec_from_file_location("fit_staged", SCRIPT)
fit_staged = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fit_staged)


def _record(name, half, nnz, best_t, dtype="float32"):
    """A record whose tuner timed staged at T = 16, 8 and 4 (the rule's own T named bare)."""
    ts = (16, 8, 4) if dtype == "float32" else (8, 4)
    candidates = [{"kernel": "staged" if t == ts[0] else f"staged:{t}", "param": t, "status": "ok",
                   "us": 5.0 if t == best_t else 10.0} for t in ts]
    candidates.append({"kernel": "cusparse:1", "param": 1, "status": "ok", "us": 1.0})  # not staged: ignored
    return {"name": name, "half": half, "dtype": dtype, "status": "ok",
            "tune": {"nnz": nnz, "candidates": candidates}}


def test_threshold_splits_few_tiles_from_many_on_the_fit_half(tmp_path):
    # 2M nonzeros want T = 4 (976 tiles at 8); 40M want 16 (9,766 tiles at 16): any threshold
    # between picks both right
    records = [_record(f"small{k}", "fit", 2_000_000, 4) for k in range(2)]
    records += [_record(f"large{k}", "fit", 40_000_000, 16) for k in range(2)]
    records += [_record("held", "report", 3_000_000, 16)]  # would pull the threshold down, were it used
    records.append({**_record("untimed", "fit", 10**7, 8), "tune": {"nnz": 10**7, "candidates": []}})
    path = tmp_path / "corpus.json"
    path.write_text(json.dumps({"records": records}))
    items = fit_staged.load([path])
    assert {i["name"] for i in items} == {"small0", "small1", "large0", "large1", "held"}
    fitted, score = fit_staged.fit(items)
    assert score == 1.0 and 2_000_000 / (256 * 8) < fitted <= 40_000_000 / (256 * 16)
    assert fit_staged.quality(next(i for i in items if i["name"] == "held"), fitted) == 0.5  # held out: missed
    lines = fit_staged.table(items, {"fitted": fitted})
    assert "| fitted | fit | float32 | 4 | 1.000 | 1.000 | 4/4 |" in lines
    assert "| fitted | report | float32 | 1 | 0.500 | 0.500 | 0/1 |" in lines


def test_main_says_when_no_record_timed_every_t(tmp_path, capsys):
    path = tmp_path / "corpus.json"
    path.write_text(json.dumps({"records": [{"name": "m", "half": "fit", "dtype": "float64", "status": "ok"}]}))
    assert fit_staged.main([str(path)]) == 1
    assert "no record timed staged at every T" in capsys.readouterr().err
