"""The SpMM kernel sources: declared names, host constants that mirror the kernels, an sm_90 compile."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from spla.backends.cuda import spmm_fused as F
from spla.backends.cuda import spmm_launch as L
from spla.backends.cuda.runtime import kernel_dir
from spla.planning import spmm as P

F32, F64, I32, I64 = (np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64))


def test_fused_kind_constant_matches_kernel():
    text = (kernel_dir() / "spmm_fused.cu").read_text()
    assert f"SPLA_FUSED_KIND_SEGMENT = {P.FUSED_KIND_SEGMENT};" in text
    assert "ITEMS_PER_BLOCK = 256 / SUB" in text and P.BLOCK == 256
    for sub in P.FUSED_SUBS:
        assert f"case {sub}: SPLA_FUSED_CASE({sub}, false)" in text


def test_kernel_names_are_declared_and_prefixed():
    names = [n for src in L.WARP_SOURCES.values() for n in src.names]
    names += [n for src in L.SUBWARP_SOURCES.values() for n in src.names]
    names += [n for src in L.REGK_SOURCES.values() for n in src.names]
    assert len(names) == len(set(names)) == 4 * 32 + 4 * 16 + 8 * 20
    fused = [n for src in F.FUSED_SOURCES.values() for n in src.names]
    assert len(set(fused)) == 8 * 5  # 5 register widths per (value, index, layout)
    wide = [n for src in F.WIDE_SOURCES.values() for n in src.names]
    assert len(set(wide)) == 2 * 3 + 2 * 2  # K = 32, 64, 128 in float32 and 32, 64 in float64, per index type
    fused += wide
    init = [n for src in L.INIT_ROWS_SOURCES.values() for n in src.names]
    assert len(set(init)) == 4  # one per (value, index)
    names += fused + init
    assert all(n.startswith("spla_spmm_") for n in names)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_spmm_kernels_compile_for_sm90(tmp_path):
    """One translation unit with a representative instantiation of every template axis."""
    sources = [L.WARP_SOURCES[(F32, I32)], L.WARP_SOURCES[(F64, I64)],
               L.SUBWARP_SOURCES[(F32, I32)], L.SUBWARP_SOURCES[(F64, I64)],
               L.REGK_SOURCES[(F32, I32, False)], L.REGK_SOURCES[(F64, I64, True)],
               F.FUSED_SOURCES[(F32, I32, False)], F.FUSED_SOURCES[(F64, I64, True)],
               F.WIDE_SOURCES[(F32, I32)], F.WIDE_SOURCES[(F64, I64)],
               *L.INIT_ROWS_SOURCES.values()]
    body = ['#include "spmm_warp.cu"', '#include "spmm_subwarp.cu"', '#include "spmm_regk.cu"',
            '#include "spmm_fused.cu"', '#include "spmm_init_rows.cu"']
    for src in sources:
        for i, name in enumerate(src.names):
            if i % 5 == 0 or "true" in name and "warp" in name and i % 3 == 0 or "fused" in name or "init" in name:
                body.append(f"static const void* p{len(body)} = (const void*)&{name};")
    unit = tmp_path / "spmm_all.cu"
    unit.write_text("\n".join(body) + "\n")
    include = kernel_dir()
    result = subprocess.run(["nvcc", "-arch=sm_90", "-std=c++17", f"-I{include}", "--cubin", "-Xptxas", "-v",
                             "-o", str(tmp_path / "out.cubin"), str(unit)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    spills = [int(line.split("bytes spill stores")[0].split(",")[-1]) for line in result.stderr.splitlines()
              if "bytes spill stores" in line]
    assert spills, "ptxas printed no resource usage"
    # ptxas may trade a register or three (<= 12 bytes, L1-resident) for 32-register full occupancy
    # in the short-k warp shapes; anything larger means an accumulator array went to local memory.
    assert max(spills) <= 16, spills


