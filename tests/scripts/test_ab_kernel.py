"""scripts/ab_kernel.py: variant parsing (CPU) and one A/B run that must catch a wrong variant (GPU)."""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "ab_kernel.py"
spec = importlib.util.spec_from_file_location("ab_kernel", SCRIPT)
ab_kernel = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ab_kernel)


def test_variants_parse_into_file_options_and_launch():
    assert ab_kernel.parse_variant("committed=") == ("committed", None, (), {})
    assert ab_kernel.parse_variant("v=file:k/try.cu -DX=1 -DY=2 @block=512 @grid=64") == (
        "v", Path("k/try.cu"), ("-DX=1", "-DY=2"), {"block": "512", "grid": "64"})
    for bad in ("noequals", "=-DX=1"):
        with pytest.raises(argparse.ArgumentTypeError, match="NAME=OPTIONS"):
            ab_kernel.parse_variant(bad)
    assert ab_kernel.parse_variant("l1=@carveout=0")[3] == {"carveout": "0"}
    for bad in ("v=@carvout=10", "v=@grid=", "v=@block=two"):
        with pytest.raises(argparse.ArgumentTypeError, match="@KEY=INTEGER"):
            ab_kernel.parse_variant(bad)


def test_variants_of_the_same_source_compile_to_separate_modules():
    """A launch attribute set on one variant's function (@carveout) must not reach another's:
    identical code and options would give both CuPy's one cached function."""
    base = ("-std=c++17",)
    first = ab_kernel.variant_options(base, "/k", (), 0)
    second = ab_kernel.variant_options(base, "/k", (), 1)
    assert first != second
    assert first[:2] == ("-std=c++17", "-I/k") and first[-1] == "-DSPLA_AB_VARIANT=0"
    assert ab_kernel.variant_options(base, "/k", ("-DX=1",), 2)[2:] == ("-DX=1", "-DSPLA_AB_VARIANT=2")


@pytest.mark.gpu
def test_a_wrong_variant_is_reported_not_timed(tmp_path):
    doubled = tmp_path / "doubled.cu"  # every x gather doubled: results twice the truth
    doubled.write_text('#define __ldg(p) (2 * *(p))\n#include "spmv_segmented.cu"\n')
    assert ab_kernel.main(["gen:random:20000:8", "--kernel", "segmented:8", "--rounds", "1", "--budget", "0.01",
                           "--variant", "committed=", "--variant", f"doubled=file:{doubled}",
                           "--out", str(tmp_path)]) == 0
    results = {r["variant"]: r for r in json.loads((tmp_path / "ab.json").read_text())["results"]}
    assert results["committed"]["status"] == "ok" and results["committed"]["ms"] > 0
    assert results["committed"]["error_vs_abs"] < 1e-5
    assert results["doubled"]["status"] == "wrong" and "ms" not in results["doubled"]
