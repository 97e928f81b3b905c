"""CPU: the Hopper wgmma GEMM (kernels/gemm/09_tf32_wgmma.cu) without a GPU.

The host's constants must be the kernel's; with nvcc present, the file must
assemble for sm_90a (ptxas checks the wgmma operands and descriptors' use)
with no register spills and HGMMA-bound PTX, and for plain sm_90 (the CI
compile test's target) to a body without wgmma. Its numerical checks are the
GPU tests in tests/backends/test_gemm_cuda.py, which cover every registry entry.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from spla.backends.cuda import gemm as cuda_gemm
from spla.backends.cuda.runtime import kernel_dir
from spla.planning import gemm as G

NVCC = shutil.which("nvcc")
SOURCE = kernel_dir() / "gemm" / "09_tf32_wgmma.cu"
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")


def kernel_constant(name):
    match = re.search(rf"constexpr int {name} = (\d+);", SOURCE.read_text())
    assert match, f"{name} not found in {SOURCE.name}"
    return int(match.group(1))


def test_host_constants_match_the_kernel():
    entry = G.ALL_KERNELS["tf32_wgmma"]
    assert entry.tile == (kernel_constant("BM"), kernel_constant("BN"))
    assert G.WGMMA_BK == kernel_constant("BK")
    assert G.WGMMA_STAGES == kernel_constant("STAGES")
    assert entry.threads == kernel_constant("THREADS")
    assert G.WGMMA_TRANSPOSE_TILE == kernel_constant("TRANSPOSE_TILE")
    # STAGES x (A tile + Bt tile) of 128-byte rows, + 1 KB to align the tiles to 1024 bytes.
    assert entry.dynamic_shared == kernel_constant("STAGES") * (kernel_constant("BM") + kernel_constant("BN")) * 128 \
        + 1024
    assert G.STATIC_SHARED_LIMIT < entry.dynamic_shared <= G.OPT_IN_SHARED_LIMIT


def test_registry_entry_is_separate_and_lower_precision():
    entry = G.ALL_KERNELS["tf32_wgmma"]
    assert "tf32_wgmma" in G.EXTRA_KERNELS and "tf32_wgmma" not in G.KERNELS
    assert entry.precision == "tf32" and entry.tf32_rounding == "truncate" and entry.k_major_b
    assert "-arch=sm_90a" in cuda_gemm.source_of(entry).options
    assert [name for name, e in G.ALL_KERNELS.items() if e.k_major_b] == ["tf32_wgmma"]
    assert "Changed from step 7" in SOURCE.read_text()


def _nvcc(*args, output):
    command = [NVCC, *args, "-std=c++17", f"-I{kernel_dir()}", "-o", str(output), str(SOURCE)]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


@needs_nvcc
def test_assembles_for_sm90a_without_spills(tmp_path):
    result = _nvcc("-gencode=arch=compute_90a,code=sm_90a", "--cubin", "-Xptxas", "-v",
                   output=tmp_path / "wgmma.cubin")
    assert result.returncode == 0, result.stderr
    report = result.stderr
    block = report[report.index("Compiling entry function 'spla_gemm_tf32_wgmma' for 'sm_90a'"):]
    properties = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", block)
    assert properties and properties.groups() == ("0", "0", "0"), block[:400]
    registers = int(re.search(r"Used (\d+) registers", block).group(1))
    assert registers <= 255
    assert "serializ" not in report.lower(), report  # ptxas warns when it serialises wgmma


@needs_nvcc
def test_ptx_has_wgmma_only_for_sm90a(tmp_path):
    result = _nvcc("-arch=compute_90a", "--ptx", output=tmp_path / "a.ptx")
    assert result.returncode == 0, result.stderr
    ptx = (tmp_path / "a.ptx").read_text()
    assert ptx.count("wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32") == 4   # BK / 8 per k-tile
    assert "fence.proxy.async.shared::cta" in ptx and "wgmma.wait_group.sync.aligned 1" in ptx
    result = _nvcc("-arch=sm_90", "--ptx", output=tmp_path / "plain.ptx")
    assert result.returncode == 0, result.stderr
    plain = (tmp_path / "plain.ptx").read_text()
    assert "wgmma.mma_async" not in plain and ".entry spla_gemm_tf32_wgmma(" in plain   # the NaN body
