"""CI without a GPU: the kernels spla.linalg declares (solver_trisolve.cu, solver_blas1.cu)
instantiate and assemble for sm_90, whatever order the suite imports modules in."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from spla import cuda
from spla.linalg import _kernels, _triangular

NVCC = shutil.which("nvcc")


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
@pytest.mark.parametrize("source", [_triangular.TRISOLVE_SOURCE, _kernels.BLAS1_SOURCE], ids=lambda s: s.filename)
def test_linalg_kernels_instantiate_for_sm90(tmp_path, source):
    addresses = ",\n".join(f"    (void*)&{name}" for name in source.names)
    wrapper = tmp_path / "instances.cu"
    wrapper.write_text(f'#include "{source.path}"\nvoid* spla_instance(int i) {{\n'
                       f"  static void* const table[] = {{\n{addresses}\n  }};\n  return table[i];\n}}\n")
    ptx = tmp_path / "instances.ptx"
    command = [NVCC, "-arch=sm_90", "-std=c++17", f"-I{cuda.kernel_dir()}", "--ptx", "-o", str(ptx), str(wrapper)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    entries = len(re.findall(r"^\.(?:visible|weak) \.entry ", ptx.read_text(), flags=re.M))
    assert entries >= len(source.names)
    ptxas = Path(NVCC).with_name("ptxas")
    assembled = subprocess.run([str(ptxas), "-arch=sm_90", "-o", str(tmp_path / "x.cubin"), str(ptx)],
                               capture_output=True, text=True, timeout=300)
    assert assembled.returncode == 0, assembled.stderr
