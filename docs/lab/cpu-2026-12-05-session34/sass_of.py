"""The SASS of every declared instantiation of one kernel source, a file a function, so that two
trees can be compared instruction by instruction without a GPU (nvcc, ptxas and cuobjdump for
sm_90; cuobjdump from the PyPI wheel nvidia-cuda-cuobjdump where the toolkit lacks it). Built
with the source's own options (its -D defines included), as the runtime's NVRTC build is.

    PYTHONPATH=. python3 sass_of.py staged OUT_DIR [--cuobjdump PATH]
    PYTHONPATH=. python3 sass_of.py gemm/06_dbuf.cu OUT_DIR

Then `diff -r BEFORE AFTER` says which functions changed."""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from spla.backends.cuda import runtime, spmv  # noqa: F401  (spmv declares its sources at import)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("family", help="a key of spla.backends.cuda.spmv.SOURCES, or a kernel file under kernels/")
    parser.add_argument("out", type=Path)
    parser.add_argument("--cuobjdump", default=shutil.which("cuobjdump") or "/tmp/cuobj/nvidia/cu13/bin/cuobjdump")
    args = parser.parse_args()
    source = spmv.SOURCES.get(args.family) or next(  # or a declared file (session 42: gemm/06_dbuf.cu)
        s for s in runtime.declared_sources() if s.path.relative_to(runtime.kernel_dir()).as_posix() == args.family)
    nvcc = shutil.which("nvcc")
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        wrapper = Path(tmp) / "wrapper.cu"
        addresses = ",\n".join(f"(void*)&{name}" for name in source.names)
        wrapper.write_text(f'#include "{source.path}"\nvoid* spla_instance(int i) {{\n'
                           f"static void* const table[] = {{\n{addresses}\n}};\nreturn table[i];\n}}\n")
        cubin = Path(tmp) / "out.cubin"
        subprocess.run([nvcc, "-arch=sm_90", "--cubin", *source.options, f"-I{runtime.kernel_dir()}",
                        "-o", str(cubin), str(wrapper)], check=True)
        sass = subprocess.run([args.cuobjdump, "-sass", str(cubin)], check=True, capture_output=True,
                              text=True).stdout
    # one file a function; addresses stripped of nothing (same code gives the same offsets)
    for block in re.split(r"\n\s*Function : ", sass)[1:]:
        name, body = block.split("\n", 1)
        (args.out / f"{name.strip()[:200]}.sass").write_text(body)
    print(f"{len(list(args.out.iterdir()))} functions in {args.out}")


if __name__ == "__main__":
    main()
