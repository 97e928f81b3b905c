"""scripts/corpus_geomean.py on canned bench_corpus.py records: later runs replace earlier ones."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "corpus_geomean.py"
spec = importlib.util.spec_from_file_location("corpus_geomean", SCRIPT)
corpus_geomean = importlib.util.module_from_spec(spec)
spec.loader.exec_module(corpus_geomean)


def _record(family, nnz, half, dtype, device, per_call=None, status="ok"):
    auto = {"kernel": "auto", "status": "ok", "runs": "vector", "device_speedup": device,
            "speedup": device if per_call is None else per_call}
    return {"name": f"{family}@{nnz:.0e}", "family": family, "half": half, "nnz_target": int(nnz),
            "dtype": dtype, "status": status, "rows": [{"kernel": "cusparse:1", "status": "ok"}, auto]}


def _write(tmp_path, name, records):
    path = tmp_path / name
    path.write_text(json.dumps({"records": records}))
    return path


def test_the_last_run_of_a_matrix_counts_and_small_ones_are_left_out(tmp_path, capsys):
    old = _write(tmp_path, "old.json", [_record("a", 1e7, "fit", "float32", 0.5),
                                        _record("b", 4e7, "report", "float32", 2.0),
                                        _record("c", 2e6, "fit", "float32", 9.0)])    # under 1e7: left out
    new = _write(tmp_path, "new.json", [_record("a", 1e7, "fit", "float32", 1.0, per_call=0.9),
                                        _record("d", 4e7, "fit", "float32", 0.5, status="failed")])
    items = corpus_geomean.load([old, new])
    assert sorted(items) == [("a@1e+07", "float32"), ("b@4e+07", "float32")]
    assert items["a@1e+07", "float32"]["device"] == 1.0  # the later run
    lines = corpus_geomean.table(items)
    assert lines[2] == "| float32 | 2 | 1.414x | 1.000x | 2.000x | 1.000x (a@1e+07) | 0 |"
    assert corpus_geomean.table(items, "per_call")[2].startswith("| float32 | 2 | 1.342x | 0.900x |")
    # the earlier run alone: one matrix below 0.95x
    assert corpus_geomean.table(corpus_geomean.load([old]))[2].endswith("| 0.500x (a@1e+07) | 1 |")
    assert corpus_geomean.main([str(old), str(new), "--exclude", "b", "--list"]) == 0
    out = capsys.readouterr().out
    assert "| float32 | 1 | 1.000x |" in out and "| a@1e+07 | fit | float32 | vector | 1.000x |" in out


def test_nothing_large_enough_is_an_error(tmp_path, capsys):
    path = _write(tmp_path, "small.json", [_record("a", 2e6, "fit", "float64", 1.2)])
    assert corpus_geomean.main([str(path)]) == 1
    assert "no record of at least 1e+07" in capsys.readouterr().err
    assert corpus_geomean.main([str(path), "--min-nnz", "1e6"]) == 0


def test_each_dtype_gets_its_row(tmp_path):
    path = _write(tmp_path, "both.json", [_record("a", 1e7, "fit", "float64", 1.5),
                                          _record("a", 1e7, "fit", "float32", 2.0)])
    rows = corpus_geomean.table(corpus_geomean.load([path]))[2:]
    assert [row.split(" | ")[:3] for row in rows] == [["| float32", "1", "2.000x"], ["| float64", "1", "1.500x"]]
