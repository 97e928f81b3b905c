#!/usr/bin/env python
"""The SASS of spla's kernels, a file a function, and what changed between two trees: a kernel
refactor checked instruction by instruction on a machine without a GPU.

    PYTHONPATH=. python3 scripts/sass_of.py dump /tmp/before [spmv_staged.cu gemm/06_dbuf.cu ...]
    # ... change the kernels ...
    PYTHONPATH=. python3 scripts/sass_of.py dump /tmp/after [the same files]
    python3 scripts/sass_of.py diff /tmp/before /tmp/after

``dump`` builds every instantiation spla declares from the named files under kernels/ (all of them
without names) for sm_90 with each source's own options (its -D defines included), as the runtime's
NVRTC build does, with nvcc and cuobjdump (``--cuobjdump``; the PyPI wheel nvidia-cuda-cuobjdump
has one where the toolkit lacks it). ``diff`` says which functions are byte-identical and, for the
others, whether their memory and math instructions (loads, stores, FMAs, tensor-core ops, barriers,
atomics) are the same in number: a change that only reorders address arithmetic and registers
still needs timing on a GPU, but not the same scrutiny as one that moves a load.
"""

from __future__ import annotations

import argparse
import collections
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: Opcodes whose count says what a function reads, writes and computes (their modifiers aside).
WORK = re.compile(r"^(LDG|LDS|LDGSTS|LD|STG|STS|ST|FFMA|DFMA|FADD|DADD|FMUL|DMUL|HMMA|HGMMA|BAR|RED|ATOM|ATOMS|ATOMG)$")


def instructions(text: str) -> list[str]:
    """A function's instructions without addresses or encodings (the lines cuobjdump ends with ';')."""
    out = []
    for line in text.splitlines():
        line = re.sub(r"/\*[0-9a-f]{4,}\*/", "", line)
        line = re.sub(r"/\* 0x[0-9a-f]+ \*/", "", line).strip()
        if line.endswith(";"):
            out.append(line)
    return out


def work_counts(lines: list[str]) -> collections.Counter:
    """How many of each memory and math opcode (predicates and modifiers stripped)."""
    counts: collections.Counter = collections.Counter()
    for line in lines:
        op = re.sub(r"^@!?U?P[0-9T]+\s+", "", line).split()[0].rstrip(";").split(".")[0]
        if WORK.match(op):
            counts[op] += 1
    return counts


def diff(before: Path, after: Path) -> list[str]:
    """One line a function that differs, then a summary line."""
    old = {p.name: p for p in before.glob("*.sass")}
    new = {p.name: p for p in after.glob("*.sass")}
    lines, same, same_work, moved = [], 0, 0, 0
    for name in sorted(old.keys() & new.keys()):
        a, b = instructions(old[name].read_text()), instructions(new[name].read_text())
        if a == b:
            same += 1
            continue
        wa, wb = work_counts(a), work_counts(b)
        if wa == wb:
            same_work += 1
            lines.append(f"changed, same memory and math instructions: {name[:-5]} ({len(a)} -> {len(b)} instructions)")
        else:
            moved += 1
            delta = ", ".join(f"{op} {wa[op]} -> {wb[op]}" for op in sorted(wa.keys() | wb.keys()) if wa[op] != wb[op])
            lines.append(f"changed: {name[:-5]} ({len(a)} -> {len(b)} instructions; {delta})")
    lines += [f"only before: {name[:-5]}" for name in sorted(old.keys() - new.keys())]
    lines += [f"only after: {name[:-5]}" for name in sorted(new.keys() - old.keys())]
    lines.append(f"{same} identical, {same_work} changed with the same memory and math instructions, {moved} changed "
                 f"in them, {len(old.keys() - new.keys())} only before, {len(new.keys() - old.keys())} only after")
    return lines


def find_cuobjdump(given: str | None) -> str:
    """``given``, else cuobjdump on PATH or beside nvcc; a clear error where there is none."""
    nvcc = shutil.which("nvcc")
    for candidate in (given, shutil.which("cuobjdump"), nvcc and str(Path(nvcc).parent / "cuobjdump")):
        if candidate and Path(candidate).is_file():
            return candidate
    raise SystemExit("no cuobjdump: pass --cuobjdump PATH (pip install nvidia-cuda-cuobjdump has one under "
                     "site-packages/nvidia/cu13/bin)")


def sources(files: list[str]) -> list:
    """The declared kernel sources of ``files`` (paths under kernels/), all of them for none."""
    from spla.backends.cuda import runtime

    declared = runtime.declared_sources()
    if not files:
        return declared
    known = {s.filename for s in declared}
    unknown = sorted(set(files) - known)
    if unknown:
        raise SystemExit(f"not a declared kernel file: {', '.join(unknown)} (one of: {', '.join(sorted(known))})")
    return [s for s in declared if s.filename in files]


def dump_one(source, out: Path, cuobjdump: str) -> int:
    """Build one source's instantiations and write their SASS, a file a function; returns how many."""
    from spla.backends.cuda import runtime

    with tempfile.TemporaryDirectory() as tmp:
        wrapper = Path(tmp) / "wrapper.cu"
        addresses = ",\n".join(f"(void*)&{name}" for name in source.names)
        wrapper.write_text(f'#include "{source.path}"\nvoid* spla_instance(int i) {{\n'
                           f"static void* const table[] = {{\n{addresses}\n}};\nreturn table[i];\n}}\n")
        cubin = Path(tmp) / "out.cubin"
        arch = next((o.split("=", 1)[1] for o in source.options if o.startswith("-arch=")), "sm_90")
        options = [o for o in source.options if not o.startswith("-arch=")]
        subprocess.run(["nvcc", f"-arch={arch}", "--cubin", *options, f"-I{runtime.kernel_dir()}", "-o", str(cubin),
                        str(wrapper)], check=True)
        sass = subprocess.run([cuobjdump, "-sass", str(cubin)], check=True, capture_output=True, text=True).stdout
    blocks = re.split(r"\n\s*Function : ", sass)[1:]
    for block in blocks:
        name, body = block.split("\n", 1)
        (out / f"{name.strip()[:200]}.sass").write_text(body)
    return len(blocks)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    dump = commands.add_parser("dump", help="write the SASS of the named kernel files (all without names)")
    dump.add_argument("out", type=Path)
    dump.add_argument("files", nargs="*", help="kernel files under kernels/, e.g. spmv_staged.cu gemm/06_dbuf.cu")
    dump.add_argument("--cuobjdump")
    dump.add_argument("--jobs", type=int, default=2)
    compare = commands.add_parser("diff", help="compare two dumps")
    compare.add_argument("before", type=Path)
    compare.add_argument("after", type=Path)
    args = parser.parse_args(argv)
    if args.command == "diff":
        print("\n".join(diff(args.before, args.after)))
        return 0
    if shutil.which("nvcc") is None:
        raise SystemExit("no nvcc on PATH")
    cuobjdump = find_cuobjdump(args.cuobjdump)
    args.out.mkdir(parents=True, exist_ok=True)
    chosen = sources(args.files)
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        counts = list(pool.map(lambda s: dump_one(s, args.out, cuobjdump), chosen))
    print(f"{sum(counts)} functions of {len(chosen)} sources in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
