"""Every figure of spla.analyze checked against a direct (slow, obvious) computation."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

import spla
from spla import analysis


def matrix_with_lengths(lengths, n_cols=None):
    lengths = np.asarray(lengths, dtype=np.int64)
    n_cols = n_cols or max(1, int(lengths.max(initial=0)))
    indptr = np.concatenate(([0], np.cumsum(lengths)))
    indices = np.concatenate([np.arange(k) for k in lengths]) if lengths.sum() else np.zeros(0, np.int64)
    return spla.CSRMatrix(np.ones(int(lengths.sum())), indices, indptr, (len(lengths), n_cols))


def direct_figures(lengths, n_cols):
    """The definitions written out with Python loops and sorting."""
    x = [int(v) for v in lengths]
    n, total = len(x), sum(x)
    s = sorted(x)
    gini = sum((2 * (i + 1) - n - 1) * v for i, v in enumerate(s)) / (n * total) if total else 0.0
    k = max(1, math.ceil(0.01 * n))
    warps = [max(x[i:i + 32]) for i in range(0, n, 32)]
    blocks = [sum(-(-v // 32) for v in x[i:i + 8]) for i in range(0, n, 8)]
    mean_w, mean_b = sum(warps) / len(warps), sum(blocks) / len(blocks)
    return {
        "density": total / (n * n_cols),
        "min": min(x), "max": max(x), "mean": total / n, "median": float(np.median(x)),
        "std": float(np.std(x)), "empty_rows": x.count(0), "gini": gini,
        "top1pct_share": sum(s[-k:]) / total if total else 0.0,
        "thread_imbalance": max(warps) / mean_w if mean_w else 1.0,
        "simd_efficiency": total / (32 * sum(warps)) if sum(warps) else 1.0,
        "warp_imbalance": max(blocks) / mean_b if mean_b else 1.0,
        "lane_efficiency": total / (32 * sum(blocks)) if sum(blocks) else 1.0,
        "warps": len(warps), "blocks": len(blocks),
    }


CASES = {
    "one row": [5],
    "uniform": [3] * 100,
    "one dense row": [1] * 63 + [500],
    "empty rows": [0, 0, 4, 0, 7, 0, 0, 1] * 9,
    "all empty": [0] * 40,
    "partial warp": list(range(1, 38)),
    "huge row, few rows": [0, 100_000],  # takes the sort path, not bincount
    "power law": None,
}


@pytest.mark.parametrize("name", list(CASES))
def test_figures_match_direct_computation(name, rng):
    lengths = CASES[name]
    if lengths is None:
        lengths = np.minimum(rng.zipf(1.8, 777), 3000).tolist()
    A = matrix_with_lengths(lengths)
    got = analysis.analyze(A)
    want = direct_figures(lengths, A.n_cols)
    stats = got["row_length"]
    assert (got["rows"], got["cols"], got["nnz"]) == (len(lengths), A.n_cols, sum(lengths))
    assert got["density"] == pytest.approx(want["density"])
    for key in ("min", "max", "empty_rows"):
        assert stats[key] == want[key], key
    for key in ("mean", "median", "std", "gini", "top1pct_share"):
        assert stats[key] == pytest.approx(want[key], rel=1e-12, abs=1e-12), key
    assert stats["cv"] == pytest.approx(want["std"] / want["mean"] if want["mean"] else 0.0)
    thread, warp = got["mappings"]["thread_per_row"], got["mappings"]["warp_per_row"]
    assert thread["groups"] == want["warps"] and warp["groups"] == want["blocks"]
    assert thread["imbalance"] == pytest.approx(want["thread_imbalance"])
    assert thread["simd_efficiency"] == pytest.approx(want["simd_efficiency"])
    assert warp["imbalance"] == pytest.approx(want["warp_imbalance"])
    assert warp["lane_efficiency"] == pytest.approx(want["lane_efficiency"])


def test_known_values_by_hand():
    # 64 rows: warp 0 holds one row of 32 and 31 rows of 1; warp 1 holds 32 rows of 1.
    lengths = [32] + [1] * 63
    got = analysis.analyze(matrix_with_lengths(lengths))
    thread = got["mappings"]["thread_per_row"]
    assert thread["max_work"] == 32 and thread["mean_work"] == 16.5
    assert thread["imbalance"] == pytest.approx(32 / 16.5)
    assert thread["simd_efficiency"] == pytest.approx(95 / (32 * 33))
    warp = got["mappings"]["warp_per_row"]  # every row is one warp-step: 8 per block
    assert warp["max_work"] == 8 and warp["imbalance"] == 1.0
    assert warp["lane_efficiency"] == pytest.approx(95 / (32 * 64))
    stats = got["row_length"]
    assert stats["median"] == 1.0 and stats["top1pct_share"] == pytest.approx(32 / 95)  # top ceil(0.64) = 1 row


def test_empty_and_rectangular_matrices():
    empty = analysis.analyze(spla.CSRMatrix(np.zeros(0), np.zeros(0, np.int32), np.zeros(1, np.int32), (0, 0)))
    assert empty["rows"] == 0 and empty["nnz"] == 0 and empty["density"] == 0.0
    assert empty["mappings"]["thread_per_row"]["imbalance"] == 1.0
    rect = analysis.analyze(sp.random(7, 300, density=0.1, format="csr", random_state=1))
    assert rect["cols"] == 300 and rect["density"] == pytest.approx(rect["nnz"] / 2100)


def test_values_section_counts_nan_inf_and_explicit_zeros():
    A = spla.CSRMatrix(np.array([np.nan, np.inf, -np.inf, 0.0, 1.0]), np.arange(5), [0, 2, 5], (2, 5))
    assert analysis.analyze(A)["values"] == {"nan": 1, "inf": 2, "explicit_zeros": 1}


def test_format_analysis_mentions_every_mapping():
    text = analysis.format_analysis(analysis.analyze(matrix_with_lengths([1, 2, 3, 40])))
    for word in ("gini", "thread-per-row", "warp-per-row", "simd efficiency", "empty rows"):
        assert word in text


def test_histogram_gini_matches_sort_on_large_random(rng):
    lengths = rng.integers(0, 50, 200_000)
    values, counts = analysis.row_length_histogram(lengths)
    s = np.sort(lengths).astype(np.float64)
    i = np.arange(1, s.size + 1)
    direct = np.sum((2 * i - s.size - 1) * s) / (s.size * s.sum())
    assert analysis._gini(values, counts, s.size, int(s.sum())) == pytest.approx(direct, rel=1e-12)
