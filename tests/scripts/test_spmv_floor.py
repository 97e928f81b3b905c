"""scripts/spmv_floor.py: the floors' exact sums and the degree order (CPU), and one run on the GPU
whose floors and relabelled products must check out and be timed."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "spmv_floor.py"
spec = importlib.util.spec_from_file_location("spmv_floor", SCRIPT)
spmv_floor = importlib.util.module_from_spec(spec)
spec.loader.exec_module(spmv_floor)


def _matrix():
    return sp.csr_matrix((np.array([2.0, -1.0, 3.0, 4.0]), np.array([0, 2, 2, 1]), np.array([0, 2, 3, 4])),
                         shape=(3, 3))


def test_floor_sums_are_the_terms_each_floor_adds():
    x = np.array([1.0, -2.0, 0.5])
    sums = spmv_floor.floor_sums(_matrix(), x)
    assert sums["stream"] == (13.0, 13.0)  # value + index an entry: 2+0, -1+2, 3+2, 4+1
    assert sums["gather"] == (1.0 + 0.5 + 0.5 - 2.0, 4.0)
    assert sums["product"] == (2.0 - 0.5 + 1.5 - 8.0, 12.0)


def test_degree_order_puts_the_most_used_columns_first_and_keeps_the_product():
    S = _matrix()
    order = spmv_floor.degree_order(S)
    assert order.tolist() == [2, 0, 1]  # column 2 twice, then 0 and 1 once each (ties by index)
    x = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(S[:, order] @ x[order], S @ x)


def _record(**kernels):
    return {"source": "gen:x", "dtype": "float32", "index_dtype": "int32", "rows": 1000, "nnz": 4000,
            "cusparse_us": 20.0, "auto_runs": "vector", "kernels": {k: {"us": v} for k, v in kernels.items()}}


def test_the_floor_takes_the_faster_launch_order_and_adds_the_rows_bytes_at_the_stream_rate():
    record = _record(**{"auto": 16.0, "floor-stream": 4.0, "floor-product": 9.0, "floor-product/per-tile": 8.0})
    assert spmv_floor.product_floor(record) == 8.0
    # 32,000 bytes of values and indices in 4 us: 8,000 bytes a us; the rows: 1,001 * 4 + 1,000 * 4 bytes
    assert spmv_floor.floor_with_rows(record) == pytest.approx(8.0 + 8004 / 8000)
    row = spmv_floor.markdown([record]).splitlines()[2]
    assert "| 16.0 (vector) | 8.0 | 9.0 |" in row and "| 2.22x | 0.56 | - | - |" in row


def test_saving_relabelled_matrices_needs_relabel(capsys):
    with pytest.raises(SystemExit):
        spmv_floor.main(["gen:random:100:2", "--save-relabelled", "somewhere"])
    assert "needs --relabel" in capsys.readouterr().err


@pytest.mark.gpu
def test_a_run_checks_and_times_every_floor_and_the_relabelled_products(tmp_path):
    assert spmv_floor.main(["gen:random:20000:8", "--dtype", "float32", "float64", "--relabel", "--rounds", "1",
                            "--budget", "0.01", "--floor-shared", "16384", "--floor-per-tile",
                            "--save-relabelled", str(tmp_path / "rel"), "--out", str(tmp_path)]) == 0
    records = json.loads((tmp_path / "floor.json").read_text())["records"]
    assert [r["dtype"] for r in records] == ["float32", "float64"]
    for record in records:
        names = set(record["kernels"])
        assert {"floor-stream", "floor-gather", "floor-product", "permute", "staged@degree+permute",
                "cusparse:1@degree", "floor-product@degree", "floor-product@degree/shared=16384",
                "floor-product/per-tile"} <= names
        for name, row in record["kernels"].items():
            assert row["status"] == "ok", (name, row)
            assert row["us"] > 0
    assert (tmp_path / "rel" / "gen-random-20000-8-degree.npz").exists()
