"""Whether kernel sources give the same machine code as at a git revision: every declared
instantiation (the names the backend asks NVRTC for) of the given kernels/ files, built with
``nvcc -arch=sm_90 -cubin`` from both trees and disassembled with cuobjdump, addresses and
encodings stripped. Session 46 checked the shared row-group loop (spla::row_groups) with it.

    PYTHONPATH=. python3 docs/lab/h200-2026-12-06-session46/same_sass.py 8bc6ce5 spmv_warp.cu \\
        spmv_vector.cu spmv_band.cu spmv_rle.cu solver_cg_product.cu

cuobjdump: ``pip download nvidia-cuda-cuobjdump``, unzip, and put its bin folder on PATH (or
CUOBJDUMP=path).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from spla.backends.cuda import runtime

CUOBJDUMP = os.environ.get("CUOBJDUMP", "cuobjdump")


def sass(kernel_dir: Path, source, work: Path) -> str:
    """The stripped SASS of every declared name of one KernelSource, built from kernel_dir."""
    names = ",\n".join(f"(void*)&{name}" for name in source.names)
    wrapper = work / "wrapper.cu"
    wrapper.write_text(f'#include "{kernel_dir / source.path.name}"\n'
                       f"void* spla_instance(int i) {{ static void* const t[] = {{{names}}}; return t[i]; }}\n")
    options = [o for o in source.options if not o.startswith("-arch=")]
    cubin = work / "wrapper.cubin"
    subprocess.run(["nvcc", "-arch=sm_90", *options, f"-I{kernel_dir}", "-cubin", "-o", str(cubin), str(wrapper)],
                   check=True)
    text = subprocess.run([CUOBJDUMP, "-sass", str(cubin)], capture_output=True, text=True, check=True).stdout
    return "\n".join(re.sub(r" +/\* 0x[0-9a-f]+ \*/", "", re.sub(r"/\*[0-9a-f]{4}\*/", "", line))
                     for line in text.splitlines() if line.strip())


def main(argv) -> int:
    revision, files = argv[0], set(argv[1:])
    here = runtime.kernel_dir()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        base.mkdir()
        for path in here.glob("*.cu*"):  # the revision's kernels/, flat (its .cuh includes too)
            shown = subprocess.run(["git", "show", f"{revision}:kernels/{path.name}"], capture_output=True)
            (base / path.name).write_bytes(shown.stdout if shown.returncode == 0 else path.read_bytes())
        differ = 0
        for source in (s for s in runtime.declared_sources() if s.path.name in files):
            same = sass(base, source, Path(tmp)) == sass(here, source, Path(tmp))
            differ += not same
            print(f"{source.path.name}: {len(source.names)} names, {'same SASS' if same else 'SASS DIFFERS'}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
