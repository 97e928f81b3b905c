"""scripts/bench_spmm.py on the host: the summary and the table follow the ks of the run (``--ks``)
and the table has a column for every kernel it times."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_spmm.py"
spec = importlib.util.spec_from_file_location("bench_spmm", SCRIPT)
bench_spmm = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench_spmm)


def _record(name, k, ms):
    """A matrix's record with auto, dia and the two cuSPARSE anchors timed at one k."""
    results = [{"kernel": kernel, "k": k, "ms": t, "status": "ok"} for kernel, t in ms.items()]
    for row in results:
        row["speedup_vs_cusparse-cupy"] = ms["cusparse-cupy"] / row["ms"]
        row["speedup_vs_cusparse"] = ms["cusparse"] / row["ms"]
    return {"name": name, "results": results, f"auto_k{k}": "dia", "spmv_auto": {"status": "ok", "ms": 0.1},
            f"cusparse_algorithm_k{k}": "csr_alg2"}


def test_a_run_at_other_ks_is_summarized_and_tabled_at_those_ks():
    records = [_record("poisson", 16, {"auto": 1.0, "dia": 1.0, "cusparse": 2.0, "cusparse-cupy": 4.0})]
    summary = bench_spmm.summarize(records, None, ks=(16,))
    assert summary["geomean_vs_cusparse-cupy_k16"] == 4.0 and summary["geomean_vs_cusparse_k16"] == 2.0
    assert "geomean_vs_cusparse-cupy_k8" not in summary
    meta = {"gpu": "a GPU", "cupy": "x", "date": "today", "ks": [16]}
    table = bench_spmm.markdown(records, None, summary, meta).splitlines()
    head, rule, row = table[2:5]
    assert head.count("|") == rule.count("|") == row.count("|")
    cells = dict(zip((c.strip() for c in head.split("|")), (c.strip() for c in row.split("|"))))
    assert cells["k"] == "16" and cells["auto picks"] == "dia" and cells["dia ms"] == "1.000"
    assert any(line.startswith("- k=16: geomean speed-up of auto over cusparse-cupy 4.00x")
               and line.endswith("; cached cuSPARSE ran csr_alg2 on 1") for line in table)
