"""scripts/bench_corpus.py on the CPU: argument parsing, the job list, and the
summaries and markdown tables from a canned run (the measuring needs a GPU)."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_corpus.py"
spec = importlib.util.spec_from_file_location("bench_corpus", SCRIPT)
bench_corpus = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench_corpus)


def test_arguments_and_defaults(tmp_path):
    args = bench_corpus.parse_args(["--out", str(tmp_path / "c")])
    assert args.scale == [2_000_000, 40_000_000] and args.dtypes == ["float32", "float64"]
    assert args.budget_min == 6 and args.half == "all" and args.real is None
    args = bench_corpus.parse_args(["--out", "x", "--scale", "3e7,1e6,1e6", "--dtypes", "float64",
                                    "--families", "stencil5,bimodal", "--budget-min", "0.5", "--real", str(tmp_path)])
    assert args.scale == [1_000_000, 30_000_000] and args.dtypes == ["float64"]
    assert args.families == ["stencil5", "bimodal"] and args.budget_min == 0.5 and args.real == tmp_path


@pytest.mark.parametrize("argv", [["--scale", "1e6"], ["--out", "x", "--scale", "abc"], ["--out", "x", "--scale", "10"],
                                  ["--out", "x", "--families", "stencil5,nope"], ["--out", "x", "--dtypes", "int8"],
                                  ["--out", "x", "--rounds", "0"], ["--out", "x", "--real", "/no/such/folder"],
                                  ["--out", "x", "--half", "train"]])
def test_bad_arguments_exit_with_usage(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        bench_corpus.parse_args(argv)
    assert exc.value.code == 2 and "usage" in capsys.readouterr().err


def test_jobs_order_scales_then_families_then_real(tmp_path):
    (tmp_path / "b.mtx.gz").write_bytes(b"")
    (tmp_path / "a.mtx").write_text("")
    (tmp_path / "notes.txt").write_text("")
    args = bench_corpus.parse_args(["--out", "x", "--scale", "1e6,2.5e7", "--half", "report", "--real", str(tmp_path)])
    jobs = bench_corpus.jobs(args)
    report = bench_corpus.corpus.families("report")
    assert [j["family"] for j in jobs if "family" in j] == report * 2
    assert [j["nnz_target"] for j in jobs if "family" in j] == [1_000_000] * len(report) + [25_000_000] * len(report)
    assert jobs[len(report)]["name"] == f"{report[0]}@25M"
    assert jobs[0]["name"] == f"{report[0]}@1M" and all(j["half"] == "report" for j in jobs[:-2])
    assert [(j["name"], j["half"]) for j in jobs[-2:]] == [("a", "real"), ("b", "real")]


def test_sources_alone_are_the_held_out_half():
    args = bench_corpus.parse_args(["--out", "x", "--scale", "none", "--sources", "gen:rmat:12:8:seed=3,gen:weblike"])
    assert args.scale == []
    rmat = "gen:rmat:12:8:seed=3"
    assert bench_corpus.jobs(args) == [{"name": rmat, "path": rmat, "half": "held-out"},
                                       {"name": "gen:weblike", "path": "gen:weblike", "half": "held-out"}]


def _row(kernel, per_call_us, device_us, anchor=(10.0, 5.0), **extra):
    return {"kernel": kernel, "status": "ok", "per_call_us": per_call_us, "device_us": device_us,
            "speedup": anchor[0] / per_call_us, "device_speedup": anchor[1] / device_us, **extra}


def _record(name, half, dtype, auto_device_us, best=("vector", 2.0)):
    rows = [_row("cusparse:1", 10.0, 5.0), _row("cusparse:2", 11.0, 6.0),
            _row("auto", 8.0, auto_device_us, runs="adaptive2"), _row("tune", 7.0, 2.5),
            _row("scalar", 9.0, 4.0), _row(best[0], 7.5, best[1]), _row("adaptive2", 8.0, auto_device_us),
            {"kernel": "segmented", "status": "wrong", "error_vs_abs": 0.3}]
    return {"name": name, "half": half, "dtype": dtype, "status": "ok", "anchor": "cusparse:1",
            "matrix": {"rows": 1000, "cols": 2000, "nnz": 123456}, "rows": rows,
            "auto_kernel": "adaptive2", "tuned_kernel": "warp:8"}


CANNED = {
    "environment": {"gpu": "NVIDIA H200", "date": "2026-12-03T12:00:00+00:00", "command": "bench_corpus.py --out x"},
    "records": [_record("stencil5@1e6", "fit", "float32", 4.0), _record("bimodal@1e6", "fit", "float32", 10.0),
                _record("stencil7@1e6", "report", "float32", 2.0, best=("warp", 1.0)),
                _record("stencil7@1e6", "report", "float64", 5.0),
                {"name": "web", "half": "real", "dtype": "float32", "status": "failed", "message": "load: boom"}],
    "skipped": ["rmat-mild@4e7"],
}


def test_summaries_and_geomeans_from_a_canned_run():
    result = json.loads(json.dumps(CANNED))  # as read back from the JSON file
    s = bench_corpus.summarize(result["records"][0])
    assert s["auto"] == {"kernel": "adaptive2", "per_call": 10 / 8, "device": 5 / 4}
    assert s["tuned"] == {"kernel": "warp:8", "per_call": 10 / 7, "device": 2.0}
    assert s["best"]["kernel"] == "vector" and s["best"]["device"] == 2.5  # segmented was wrong: not a candidate
    table = {(g["half"], g["dtype"]): g for g in bench_corpus.geomeans(result["records"])}
    assert set(table) == {("fit", "float32"), ("report", "float32"), ("report", "float64")}
    fit = table["fit", "float32"]
    assert fit["matrices"] == 2
    assert math.isclose(fit["auto_device"], math.sqrt(5 / 4 * 5 / 10))
    assert fit["auto_worst_device"] == 0.5 and math.isclose(fit["tuned_per_call"], 10 / 7)
    assert math.isclose(table["report", "float32"]["best_device"], 5.0)


def test_markdown_from_a_canned_run():
    result = {**CANNED, "geomeans": bench_corpus.geomeans(CANNED["records"])}
    text = bench_corpus.markdown(result)
    lines = text.splitlines()
    assert "NVIDIA H200" in lines[0] and "bench_corpus.py --out x" in lines[0]
    geo = [line for line in lines if line.startswith("| fit | float32 |")]
    assert geo == ["| fit | float32 | 2 | 1.25x | 0.79x | 0.50x | 1.43x | 2.00x | 2.50x |"]
    row = next(line for line in lines if line.startswith("| stencil7@1e6 | report | float32 |"))
    assert row == ("| stencil7@1e6 | report | float32 | 1,000 x 2,000 | 123,456 | adaptive2 | 1.25x | 2.50x | "
                   "warp:8 | 1.43x | 2.00x | warp | 5.00x |")
    failed = next(line for line in lines if line.startswith("| web |"))
    assert "failed: load: boom" in failed and failed.count("|") == lines[-3].count("|")
    assert lines[-1] == "Not run (time budget spent): rmat-mild@4e7"
    # every table row has as many cells as its header
    for header_at in (i for i, line in enumerate(lines) if line.startswith("| half") or line.startswith("| matrix")):
        width = lines[header_at].count("|")
        j = header_at + 1
        while j < len(lines) and lines[j].startswith("|"):
            assert lines[j].count("|") == width, lines[j]
            j += 1


def test_a_run_stopped_from_outside_keeps_what_it_measured(tmp_path, monkeypatch):
    """Both files are rewritten after every matrix: a stop during the second matrix (a timeout's
    signal, ^C) leaves the first one's records, marked unfinished; a run that ends is finished."""
    import spla.bench.timing

    monkeypatch.setattr(spla.bench.timing, "environment", lambda: {"gpu": "test", "command": "bench_corpus.py"})
    monkeypatch.setattr(bench_corpus.corpus, "build", lambda family, nnz: {"family": family})
    measured = []

    def run_one(job, dtype, args):
        if job["name"].startswith("bimodal"):
            raise KeyboardInterrupt
        measured.append((job["name"], dtype))
        return {**{k: v for k, v in job.items() if k != "matrix"}, "dtype": dtype, "status": "failed",
                "message": "canned"}

    monkeypatch.setattr(bench_corpus, "run_one", run_one)
    out = tmp_path / "c"
    with pytest.raises(KeyboardInterrupt):
        bench_corpus.main(["--out", str(out), "--scale", "1e6", "--families", "stencil5,bimodal"])
    kept = json.loads(out.with_suffix(".json").read_text())
    assert kept["finished"] is False and measured == [("stencil5@1M", "float32"), ("stencil5@1M", "float64")]
    assert [(r["name"], r["dtype"]) for r in kept["records"]] == measured
    assert out.with_suffix(".md").read_text().rstrip().endswith("(written after each one).")
    bench_corpus.main(["--out", str(out), "--scale", "1e6", "--families", "stencil5"])
    done = json.loads(out.with_suffix(".json").read_text())
    assert done["finished"] is True and "Unfinished" not in out.with_suffix(".md").read_text()
