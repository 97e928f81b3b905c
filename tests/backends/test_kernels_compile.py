"""CI without a GPU: every CUDA source compiles for sm_90, and every kernel the
Python side declares (KernelSource name expressions) instantiates and assembles.

Each kernels/**/*.cu is compiled as is with ``nvcc -arch=sm_90 --ptx``; then,
for each declared KernelSource, a wrapper that includes the file and takes the
address of every declared name expression forces those template
instantiations, the PTX must hold one entry per name, and ptxas must assemble
it for sm_90: PTX alone passes a kernel that ptxas then refuses, such as one
with more than 48 KiB of static shared memory (NVRTC compiles all of a file's
names in one module, so one such instantiation breaks every kernel of the
file on the GPU). Skipped only when nvcc is missing.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from spla.backends.cuda import runtime

NVCC = shutil.which("nvcc")
KERNEL_DIR = runtime.kernel_dir()
SOURCES = sorted(KERNEL_DIR.rglob("*.cu"))
pytestmark = pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")


def _arch(options) -> str:
    """The architecture a source is built for: its own -arch option (wgmma needs sm_90a), else sm_90."""
    return next((o.split("=", 1)[1] for o in options if o.startswith("-arch=")), "sm_90")


def _nvcc(source: Path, out: Path, options=()) -> subprocess.CompletedProcess:
    flags = [o for o in options if not o.startswith("-arch=")]
    command = [NVCC, f"-arch={_arch(options)}", *flags, f"-I{KERNEL_DIR}", "--ptx", "-o", str(out), str(source)]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def _ptxas(ptx: Path, options=()) -> subprocess.CompletedProcess:
    ptxas = Path(NVCC).with_name("ptxas")
    command = [str(ptxas) if ptxas.exists() else "ptxas", f"-arch={_arch(options)}",
               "-o", str(ptx.with_suffix(".cubin")),
               str(ptx)]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def _declared_sources():
    """Every declared source, found through the backend (each launcher module declares at import)."""
    return runtime.declared_sources()


def _plain_options_by_file(declared) -> dict:
    """The options a plain build of each file needs: its declared ones without the host's -D
    defines, so the file compiles as is (kernels/launch_config.cuh supplies the defaults)."""
    options: dict = {}
    for source in declared:
        options.setdefault(source.path.resolve(), set()).update(o for o in source.options if not o.startswith("-D"))
    return {path: sorted(opts) for path, opts in options.items()}


def _wrapper(source: runtime.KernelSource) -> str:
    addresses = ",\n".join(f"        (void*)&{name}" for name in source.names)
    return (f'#include "{source.path}"\n'
            "void* spla_instance(int i) {\n"
            f"    static void* const table[] = {{\n{addresses}\n    }};\n"
            "    return table[i];\n"
            "}\n")


def test_there_are_kernels():
    assert any(p.name.startswith("spmv_") for p in SOURCES), f"no spmv_*.cu under {KERNEL_DIR}"


def test_every_source_and_declared_instantiation_compiles(tmp_path):
    declared = _declared_sources()
    options = _plain_options_by_file(declared)
    jobs = [(path, tmp_path / f"file-{k}.ptx", None) for k, path in enumerate(SOURCES)]
    for k, source in enumerate(declared):
        wrapper = tmp_path / f"instances-{k}-{source.path.stem}.cu"
        wrapper.write_text(_wrapper(source))
        jobs.append((wrapper, tmp_path / f"instances-{k}.ptx", source))

    def build(job):
        path, ptx, source = job
        flags = source.options if source is not None else options.get(path.resolve(), runtime.NVRTC_OPTIONS)
        result = _nvcc(path, ptx, flags)
        if result.returncode == 0 and source is not None:
            assembled = _ptxas(ptx, source.options)
            if assembled.returncode != 0:
                return job, assembled
        return job, result

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(build, jobs))

    failures = []
    for (path, ptx, source), result in results:
        what = path.name if source is None else f"instantiations of {source.filename} ({len(source.names)} names)"
        if result.returncode != 0:
            failures.append(f"{what}:\n{result.stderr.strip()}")
            continue
        if source is not None:
            entries = len(re.findall(r"^\.(?:visible|weak) \.entry ", ptx.read_text(), flags=re.M))
            if entries < len(source.names):
                failures.append(f"{what}: PTX has {entries} kernel entries, expected {len(source.names)}")
    assert not failures, "\n\n".join(failures)


def test_every_kernel_file_is_declared():
    """A .cu file no launcher declares would be compiled by nothing at run time."""
    declared = {source.path.resolve() for source in _declared_sources()}
    assert not [p.name for p in SOURCES if p.resolve() not in declared]


def test_launch_config_defaults_equal_the_host_values():
    """A plain nvcc build must build what the host runs: the defaults of launch_config.cuh are
    the values the host passes as -D defines."""
    defaults = dict(re.findall(r"#define (SPLA_\w+) (\d+)", (KERNEL_DIR / "launch_config.cuh").read_text()))
    passed = {}
    for source in _declared_sources():
        for option in source.options:
            if option.startswith("-DSPLA_"):
                name, value = option[2:].split("=")
                passed[name] = value
    assert passed and passed == defaults


def test_every_declared_name_carries_the_prefix_and_its_file_exists():
    for source in _declared_sources():
        assert source.path.is_file(), f"{source.filename} is declared but missing"
        for name in source.names:
            assert name.startswith("spla_"), name
