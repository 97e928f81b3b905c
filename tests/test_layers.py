"""The shape of the package: planning imports no backend, the CPU path loads no CUDA
module, and module-level imports form no cycle (except the container's operator pair)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

SPLA = Path(__file__).resolve().parents[1] / "spla"
# CSRMatrix's operators call the front doors, which take CSRMatrix: the one allowed pair
ALLOWED_CYCLE_MODULES = {"spla.csr", "spla.csr_ops", "spla.ops.spmv", "spla.ops.spmm"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(SPLA.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, top_level_only: bool) -> set[str]:
    """spla modules that ``path`` imports (relative imports resolved)."""
    tree = ast.parse(path.read_text())
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("spla")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module.startswith("spla"):
                found.add(module)
                found |= {f"{module}.{a.name}" for a in node.names}
    return found


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in SPLA.rglob("*.py")}


def test_planning_imports_no_backend_and_no_cupy():
    for name, path in _modules().items():
        if not name.startswith("spla.planning"):
            continue
        text = path.read_text()
        bad = {m for m in _imports(path, top_level_only=False)
               if m.startswith(("spla.backends", "spla.backend", "spla.ops", "spla.cuda", "spla.bench"))}
        assert not bad, f"{name} imports {sorted(bad)}"
        assert "import cupy" not in text and "from cupy" not in text, f"{name} imports CuPy"


def test_module_level_imports_have_no_cycle_but_the_operator_pair():
    modules = _modules()
    graph = {name: {m for m in _imports(path, top_level_only=True) if m in modules and m != name}
             for name, path in modules.items()}
    # a package's __init__ importing its own submodules is how packages re-export, not a cycle
    cycles = []
    state: dict[str, int] = {}

    def visit(node, stack):
        state[node] = 1
        stack.append(node)
        for nxt in graph[node]:
            if state.get(nxt) == 1:
                cycle = stack[stack.index(nxt):]
                if not set(cycle) <= ALLOWED_CYCLE_MODULES and not _package_reexport(cycle):
                    cycles.append(cycle + [nxt])
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = 2

    for name in graph:
        if name not in state:
            visit(name, [])
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)


def _package_reexport(cycle) -> bool:
    return any(b.startswith(a + ".") for a in cycle for b in cycle)


def test_the_cpu_path_loads_no_cuda_module_with_cupy_blocked():
    code = """
import sys
class Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("cupy", "cupyx", "cupy_backends"):
            raise ImportError("CuPy blocked for this test")
        return None
sys.meta_path.insert(0, Blocked())
import numpy as np
import spla
from spla import linalg
A = spla.load("gen:poisson2d:16")
x = np.ones(A.n_cols)
y = spla.spmv(A, x, out=np.empty(A.n_rows))
Y = spla.spmm(A, np.ones((A.n_cols, 3)))
C = spla.gemm(np.ones((4, 3)), np.ones((3, 2)))
xs, info = linalg.cg(A, x, rtol=1e-8, M=linalg.jacobi(A))
assert info == 0
ranks = spla.pagerank(spla.load("gen:rmat:8:4"), device="cpu")
spla.analyze(A)
import spla.planning.spmv, spla.planning.spmm, spla.planning.gemm, spla.bench.spmv
print(sorted(m for m in sys.modules if m.startswith(("spla.backends.cuda", "cupy"))))
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                            cwd=SPLA.parent)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]", result.stdout
