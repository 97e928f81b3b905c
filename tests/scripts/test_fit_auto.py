"""scripts/fit_auto.py on canned corpus records: the fit uses the fit half only and finds the split."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
from pathlib import Path

from spla.planning import rle
from spla.planning.spmv import AUTO_RULE

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "fit_auto.py"
spec = importlib.util.spec_from_file_location("fit_auto", SCRIPT)
fit_auto = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fit_auto)


def _record(name, half, mean, n_rows, best, dtype="float32"):
    """An irregular matrix (max row 5000, scattered columns) whose fastest spla kernel is ``best``."""
    nnz = int(mean * n_rows)
    times = {k: 10.0 for k in ("scalar", "warp", "vector", "adaptive", "adaptive2", "segmented")}
    times[best] = 5.0
    return {"name": name, "half": half, "dtype": dtype, "index_dtype": "int32", "status": "ok", "near_share": 0.1,
            "row_stats": {"n_rows": n_rows, "nnz": nnz, "mean": mean, "std": 3 * mean, "cv": 3.0, "max": 5000,
                          "empty": 0},
            "rows": [{"kernel": k, "device_us": t} for k, t in times.items()]}


def test_fit_splits_the_fit_half_and_ignores_the_others(tmp_path):
    records = [_record(f"short{m}", "fit", m, 10**6, "segmented") for m in (2, 3, 4)]
    records += [_record(f"long{m}", "fit", m, 10**6, "adaptive2") for m in (10, 20, 40)]
    # held-out records that would pull the threshold up, were they used
    records += [_record(f"held{m}", "report", m, 10**6, "segmented") for m in (12, 15, 30)]
    path = tmp_path / "corpus.json"
    path.write_text(json.dumps({"records": records}))
    items = fit_auto.load([path], None, None)
    fitted, score = fit_auto.fit(items)
    assert 4 < fitted.segmented_mean < 10 and score == 1.0
    report = [i for i in items if i["half"] == "report"]
    assert all(fit_auto.quality(i, fitted) == 0.5 for i in report)  # held out: the rule misses them
    lines = fit_auto.table(items, {"fitted": fitted})
    assert any("| fitted | report | float32 | 3 | 0.500 | 0.500 | 0/3 |" in line for line in lines)
    before = dataclasses.replace(fitted, segmented_mean=0.0)
    assert all(fit_auto.picked(i, before) == "adaptive2" for i in items)


LARGE = AUTO_RULE["irregular-large"]  # the large irregular class's kernel (staged)


def test_large_threshold_splits_by_size_on_the_fit_half(tmp_path):
    """Irregular matrices where the large class's kernel is fastest from some size on: large_nnz
    lands between the largest win of the others and the smallest win of the fit half (rows of 40
    on average: longer than the mid class takes)."""
    records = []
    for n_rows, large_us in ((10**5, 20.0), (10**6, 20.0), (10**7, 4.0), (10**8, 4.0)):
        record = _record(f"power{n_rows}", "fit", 40, n_rows, "adaptive2")
        record["rows"] += [{"kernel": LARGE, "device_us": large_us}, {"kernel": "cusparse:1", "device_us": 30.0},
                           {"kernel": "cusparse:2", "device_us": 60.0}]
        records.append(record)
    path = tmp_path / "corpus.json"
    path.write_text(json.dumps({"records": records}))
    items = fit_auto.load([path], None, None)
    fitted, score = fit_auto.fit(items)
    assert 40 * 10**6 < fitted.large_nnz <= 40 * 10**7 and score == 1.0
    assert [fit_auto.picked(i, fitted) for i in items] == ["adaptive2", "adaptive2", LARGE, LARGE]
    # the large-matrix table compares each pick with the faster cuSPARSE algorithm
    lines = fit_auto.large_table(items, {"fitted": fitted})
    assert any(line.startswith("| fitted | float32 | 3 | ") for line in lines)


def test_mid_class_splits_by_size_and_column_locality(tmp_path):
    """staged fastest on the fit half's irregular matrices from some size on, except where
    neighbouring columns are close (near share 0.8: adaptive2): mid_nnz lands between the sizes
    and mid_near between the near shares, and large_nnz stays above the local matrix it would
    lose on. A record without a near share takes it from the near-share cache."""
    def record(name, n_rows, near, best):
        record = _record(name, "fit", 20, n_rows, best)
        record["near_share"] = near
        record["rows"] += [{"kernel": LARGE, "device_us": 4.0 if best == LARGE else 20.0}]
        return record
    records = [record("small", 10**4, 0.1, "adaptive2"), record("graph", 10**5, 0.1, LARGE),
               record("graph-big", 3 * 10**5, 0.2, LARGE), record("dense-rows", 3 * 10**5, 0.8, "adaptive2")]
    del records[1]["near_share"]
    path = tmp_path / "corpus.json"
    path.write_text(json.dumps({"records": records}))
    items = fit_auto.load([path], None, None, near_cache={"graph": 0.1})
    fitted, score = fit_auto.fit(items)
    assert score == 1.0 and 2 * 10**5 < fitted.mid_nnz <= 2 * 10**6 and 0.2 < fitted.mid_near < 0.8
    assert fitted.large_nnz > 6 * 10**6
    assert [fit_auto.picked(i, fitted) for i in items] == ["adaptive2", LARGE, LARGE, "adaptive2"]


def _huge(name, half, share, spla_us, vendor_us):
    """A 20M-nnz matrix whose longest row holds ``share`` of the nonzeros; adaptive2 at
    ``spla_us``, the large class's kernel at ``vendor_us``."""
    record = _record(name, half, 20, 10**6, "adaptive2")
    record["row_stats"]["max"] = int(share * record["row_stats"]["nnz"])
    for row in record["rows"]:
        row["device_us"] = spla_us if row["kernel"] == "adaptive2" else 2 * spla_us
    record["rows"] += [{"kernel": LARGE, "device_us": vendor_us}, {"kernel": "cusparse:1", "device_us": 30.0},
                       {"kernel": "cusparse:2", "device_us": 60.0}]
    return record


def test_huge_share_splits_hub_rows_from_power_laws_and_needs_evidence(tmp_path):
    """The large class's kernel wins on the large power laws (longest row 0.5% of nnz), adaptive2
    where a row holds 5%: huge_share lands between them. Without a fit matrix that wants adaptive2
    it stays infinite (every large huge-row matrix runs the large kernel), whatever the report half says."""
    small = _record("small", "fit", 20, 10**5, "adaptive2")  # where large_nnz starts: below the rest
    small["rows"] += [{"kernel": LARGE, "device_us": 20.0}, {"kernel": "cusparse:1", "device_us": 20.0}]
    power = [_huge(f"power{k}", "fit", 0.005, 10.0, 8.0) for k in range(2)]
    hubs = [_huge("hubs", "fit", 0.05, 5.0, 8.0)]
    held = [_huge("held", "report", 0.1, 5.0, 8.0)]
    for records, want in (([small, *power, *hubs, *held], (0.005, 0.05)), ([small, *power, *held], None)):
        path = tmp_path / "corpus.json"
        path.write_text(json.dumps({"records": records}))
        items = fit_auto.load([path], None, None)
        fitted, _ = fit_auto.fit(items)
        picks = {i["name"]: fit_auto.picked(i, fitted) for i in items}
        assert picks["small"] == "adaptive2" and picks["power0"] == picks["power1"] == LARGE
        if want is None:
            assert fitted.huge_share == float("inf") and picks["held"] == LARGE
        else:
            assert want[0] < fitted.huge_share < want[1] and picks["hubs"] == picks["held"] == "adaptive2"


def test_real_matrices_split_into_a_fit_and_a_report_half(tmp_path):
    """Real matrices go to real-fit or real-report by their name's CRC, stably; only real-fit
    ones move the thresholds."""
    names = [f"real{k}" for k in range(40)]
    halves = {name: fit_auto.half_of({"name": name, "half": "real"}) for name in names}
    assert set(halves.values()) == {"real-fit", "real-report"}
    assert 10 <= sum(h == "real-fit" for h in halves.values()) <= 30
    assert fit_auto.half_of({"name": "x", "half": "report"}) == "report"
    fit_names = [n for n in names if halves[n] == "real-fit"][:3]
    report_names = [n for n in names if halves[n] == "real-report"][:3]
    records = [_record(n, "real", m, 10**6, "segmented") for n, m in zip(fit_names, (2, 3, 4))]
    records += [_record(f"long{m}", "fit", m, 10**6, "adaptive2") for m in (10, 20, 40)]
    records += [_record(n, "real", m, 10**6, "segmented") for n, m in zip(report_names, (12, 15, 30))]
    path = tmp_path / "corpus.json"
    path.write_text(json.dumps({"records": records}))
    items = fit_auto.load([path], None, None)
    fitted, score = fit_auto.fit(items)
    assert 4 < fitted.segmented_mean < 10 and score == 1.0
    assert all(fit_auto.quality(i, fitted) == 0.5 for i in items if i["half"] == "real-report")


def _regular(name, mean, n_rows, cols, best, dtype="float32"):
    """Rows of exactly ``mean`` scattered columns (near share 0) over ``cols`` columns; ``best``
    fastest among spla's kernels."""
    times = {k: 10.0 for k in ("scalar", "warp", "vector", "adaptive", "adaptive2", "segmented", LARGE)}
    times[best] = 5.0
    nnz = mean * n_rows
    return {"name": name, "half": "fit", "dtype": dtype, "index_dtype": "int32", "status": "ok",
            "near_share": 0.0, "matrix": {"rows": n_rows, "cols": cols, "nnz": nnz},
            "row_stats": {"n_rows": n_rows, "nnz": nnz, "mean": float(mean), "std": 0.0, "cv": 0.0, "max": mean,
                          "empty": 0},
            "rows": [{"kernel": k, "device_us": t} for k, t in times.items()]}


def test_tiny_rows_and_x_sizes_are_fitted_only_on_evidence(tmp_path):
    """Many rows of 3 take scalar and rows of 8 vector: tiny_mean lands between them. Large regular
    rows take vector over a 2,000-column x, segmented over 50,000 columns and staged over 4M:
    cached_x_bytes and staged_x_bytes land between those x sizes (large_nnz from two irregular
    matrices). Without the tiny and x records' winners the classes stay off."""
    irregular = [_record("small", "fit", 40, 10**5, "adaptive2"), _record("big", "fit", 40, 10**6, "adaptive2")]
    irregular[0]["rows"] += [{"kernel": LARGE, "device_us": 20.0}]
    irregular[1]["rows"] += [{"kernel": LARGE, "device_us": 4.0}]
    tiny = [_regular("three", 3, 200_000, 2000, "scalar"), _regular("eight", 8, 200_000, 2000, "vector")]
    wide = [_regular("narrow-x", 10, 4 * 10**6, 2000, "vector"), _regular("mid-x", 10, 4 * 10**6, 50_000, "segmented"),
            _regular("wide-x", 10, 4 * 10**6, 4 * 10**6, LARGE, "float64")]  # float32 would be regular-large-packed
    path = tmp_path / "corpus.json"
    path.write_text(json.dumps({"records": irregular + tiny + wide}))
    items = fit_auto.load([path], None, None)
    fitted, score = fit_auto.fit(items)
    assert score == 1.0
    assert 3 < fitted.tiny_mean < 8
    assert 2000 * 4 < fitted.cached_x_bytes < 50_000 * 4 < fitted.staged_x_bytes < 4 * 10**6 * 4
    picks = {i["name"]: fit_auto.picked(i, fitted) for i in items}
    assert picks == {"small": "adaptive2", "big": LARGE, "three": "scalar", "eight": "vector",
                     "narrow-x": "vector", "mid-x": "segmented", "wide-x": LARGE}
    # the row kernels best everywhere: no evidence for either class, both stay off
    for record in tiny + wide:
        for row in record["rows"]:
            row["device_us"] = 5.0 if row["kernel"] == "vector" else 10.0
    path.write_text(json.dumps({"records": irregular + tiny + wide}))
    fitted, _ = fit_auto.fit(fit_auto.load([path], None, None))
    assert fitted.tiny_mean == 0.0 and fitted.cached_x_bytes == fitted.staged_x_bytes == fit_auto.NEVER


def test_each_fitted_move_is_reported_alone_on_the_code_rule(tmp_path, capsys):
    """Beside the whole fit, the code's rule with one moved threshold at a time: only the moved ones,
    each differing from the code in that threshold alone, each in main's tables."""
    fitted = dataclasses.replace(fit_auto.AUTO, segmented_mean=9.5, large_nnz=fit_auto.AUTO.large_nnz)
    rules = fit_auto.one_at_a_time(fitted)
    assert list(rules) == ["code, segmented_mean = 9.5"]
    assert rules["code, segmented_mean = 9.5"] == dataclasses.replace(fit_auto.AUTO, segmented_mean=9.5)
    records = [_record(f"short{m}", "fit", m, 10**6, "segmented") for m in (2, 3, 8)]
    path = tmp_path / "corpus.json"
    path.write_text(json.dumps({"records": records}))
    assert fit_auto.main([str(path)]) == 0
    out = capsys.readouterr().out
    fitted, _ = fit_auto.fit(fit_auto.load([path], None, None))
    assert "code, segmented_mean = 16" in fit_auto.one_at_a_time(fitted)  # rows of 8 want segmented too
    for label in fit_auto.one_at_a_time(fitted):
        assert f"| {label} | fit | float32 | 3 |" in out


def test_gzipped_records_load_as_the_plain_file(tmp_path):
    import gzip

    records = [_record(f"r{m}", "fit", m, 10**6, "segmented") for m in (2, 3)]
    plain, packed = tmp_path / "corpus.json", tmp_path / "corpus-gz.json.gz"
    plain.write_text(json.dumps({"records": records}))
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert fit_auto.read_records(packed) == records
    names = [(i["name"], i["dtype"], i["times"]) for i in fit_auto.load([packed], None, None)]
    assert names == [(r["name"], "float32", {x["kernel"]: x["device_us"] for x in r["rows"]}) for r in records]


def test_tile_spans_put_packed_rows_within_a_narrow_window_on_staged(tmp_path):
    """A record of float32's packed class (large regular rows of 10 over scattered columns) stays on
    segmented without a tile span, and moves to staged with one of at most packed_span."""
    rows = {k: 10.0 for k in ("scalar", "warp", "vector", "adaptive", "adaptive2")}
    record = {"name": "knn", "half": "held-out", "dtype": "float32", "index_dtype": "int32", "status": "ok",
              "near_share": 0.01, "matrix": {"rows": 4_000_000, "cols": 4_000_000, "nnz": 40_000_000},
              "row_stats": {"n_rows": 4_000_000, "nnz": 40_000_000, "mean": 10.0, "std": 0.0, "cv": 0.0,
                            "max": 10, "empty": 0},
              "rows": [{"kernel": k, "device_us": t} for k, t in {**rows, "segmented": 5.0, "staged": 4.0}.items()]}
    path, spans = tmp_path / "corpus.json", tmp_path / "spans.json"
    path.write_text(json.dumps({"records": [record]}))
    spans.write_text(json.dumps({"knn": {"tile_span_median": 4000.0}}))
    plain = fit_auto.load([path], None, None)
    assert plain[0]["span"] is None and fit_auto.picked(plain[0], fit_auto.AUTO) == "segmented"
    narrow = fit_auto.load([path], None, None, spans=fit_auto.read_spans(spans))
    assert narrow[0]["span"]() == 4000.0 and fit_auto.picked(narrow[0], fit_auto.AUTO) == "staged"
    wide = dataclasses.replace(fit_auto.AUTO, packed_span=3999.0)
    assert fit_auto.picked(narrow[0], wide) == "segmented"
    # a record that carries its span (bench_corpus.py) needs no file
    path.write_text(json.dumps({"records": [{**record, "tile_span": 4000.0}]}))
    assert fit_auto.picked(fit_auto.load([path], None, None)[0], fit_auto.AUTO) == "staged"
    # a wide window whose tiles read hardly a line twice (packed_lines) runs staged too; fewer lines
    # keep segmented, from the file or from the record
    for lines, kernel in ((4000.0, "staged"), (3000.0, "segmented")):
        spans.write_text(json.dumps({"knn": {"tile_span_median": 4e6, "tile_lines_median": lines}}))
        path.write_text(json.dumps({"records": [record]}))
        item = fit_auto.load([path], None, None, spans=fit_auto.read_spans(spans))[0]
        assert item["lines"]() == lines and fit_auto.picked(item, fit_auto.AUTO) == kernel
        path.write_text(json.dumps({"records": [{**record, "tile_span": 4e6, "tile_lines": lines}]}))
        assert fit_auto.picked(fit_auto.load([path], None, None)[0], fit_auto.AUTO) == kernel


def test_rle_is_picked_only_from_todays_cut_where_the_record_carries_a_mean_run(tmp_path):
    """A large regular record whose runs were timed under an older, lower cut: rle stays the pick only
    where its mean run reaches rle.AUTO_MIN_RUN (and where the record carries none, as before)."""
    record = {"name": "blocks", "half": "held-out", "dtype": "float32", "index_dtype": "int32", "status": "ok",
              "near_share": 0.9, "matrix": {"rows": 1_000_000, "cols": 1_000_000, "nnz": 30_000_000},
              "row_stats": {"n_rows": 1_000_000, "nnz": 30_000_000, "mean": 30.0, "std": 0.0, "cv": 0.0,
                            "max": 30, "empty": 0},
              "rows": [{"kernel": k, "device_us": t} for k, t in
                       {"scalar": 30.0, "warp": 10.0, "vector": 10.0, "staged": 8.0, "rle": 6.0}.items()]}
    path = tmp_path / "corpus.json"
    picks = {}
    for mean_run in (None, rle.AUTO_MIN_RUN - 0.5, rle.AUTO_MIN_RUN):
        path.write_text(json.dumps({"records": [{**record, "mean_run": mean_run}]}))
        picks[mean_run] = fit_auto.picked(fit_auto.load([path], None, None)[0], fit_auto.AUTO)
    assert picks[None] == "rle" and picks[rle.AUTO_MIN_RUN] == "rle"
    assert picks[rle.AUTO_MIN_RUN - 0.5] != "rle"
