"""spla.bench's SpMV check, shared by bench_spmv.py, ab_kernel.py and time_turns.py (CPU)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import spla
from spla import bench


def test_spmv_check_separates_rounding_from_wrong_answers(rng):
    A64 = spla.CSRMatrix.from_scipy(sp.random(2000, 1500, density=0.01, format="csr", random_state=rng))
    check = bench.SpmvCheck.for_matrix(A64)
    assert np.array_equal(check.x, check.x.astype(np.float32).astype(np.float64))  # one exact input for both dtypes
    assert check.error(check.reference) == 0.0

    A32 = A64.to_scipy().astype(np.float32)
    rounded = check.error(A32 @ check.x.astype(np.float32))
    assert 0 < rounded and check.passes(rounded, "float32") and not check.passes(rounded, np.float64)

    wrong = A64.to_scipy() @ check.x
    wrong[7] += 0.05 * abs(wrong).max()  # one row off: an indexing bug's size
    assert not check.passes(check.error(wrong), "float32")


def test_spmv_check_records_ok_wrong_and_failed_runs(rng, capsys):
    A64 = spla.CSRMatrix.from_scipy(sp.random(300, 300, density=0.05, format="csr", random_state=rng))
    check = bench.SpmvCheck.for_matrix(A64)
    rows = [{}, {}, {}]
    assert check.record(rows[0], lambda: check.reference.copy(), "float64", "exact")
    assert not check.record(rows[1], lambda: 2 * check.reference, "float32", "doubled")
    assert not check.record(rows[2], lambda: 1 / 0, "float32", "raises")
    assert [r["status"] for r in rows] == ["ok", "wrong", "failed"]
    assert rows[0]["error_vs_abs"] == 0 and rows[1]["error_vs_abs"] > 0.1
    assert "ZeroDivisionError" in rows[2]["message"]
    printed = capsys.readouterr().out
    assert "doubled: WRONG" in printed and "raises: FAILED" in printed and "exact" not in printed


def test_spmv_check_judges_a_result_that_is_not_y_by_its_own_error_and_tolerance(rng):
    A64 = spla.CSRMatrix.from_scipy(sp.random(300, 300, density=0.05, format="csr", random_state=rng))
    check = bench.SpmvCheck.for_matrix(A64)
    rows = [{}, {}]
    assert check.record(rows[0], lambda: 3.0, "float32", "near", error_of=lambda got: abs(got - 3.001), tolerance=0.01)
    assert not check.record(rows[1], lambda: 3.0, "float32", "far", error_of=lambda got: abs(got - 3.1),
                            tolerance=0.01)
    assert [r["status"] for r in rows] == ["ok", "wrong"]
    assert rows[0]["error_vs_abs"] == pytest.approx(0.001)


def test_within_reads_a_slack_as_time_over_the_best_time():
    # 15% means the pick takes at most 1.15x the best time: a quality of 1/1.15 = 0.870 is in,
    # 0.86 (1.163x the best time) and 0.85 are out
    assert bench.within(1.0, bench.FIRST_CHOICE_SLACK)
    assert bench.within(1 / 1.15, bench.FIRST_CHOICE_SLACK)
    assert not bench.within(0.86, bench.FIRST_CHOICE_SLACK)
    assert not bench.within(0.85, bench.FIRST_CHOICE_SLACK)
    assert bench.within(1 / 1.05, bench.TUNED_SLACK)
    assert not bench.within(0.95, bench.TUNED_SLACK)
