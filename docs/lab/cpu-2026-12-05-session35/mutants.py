"""Planted faults against the emulated kernel tests: each mutant edits one kernel file in place,
runs tests/backends/test_kernels_emulated.py (-k the mutant's filter) and restores the file, and
the table says how many cases failed. A mutant no case catches is a hole in the tests.

    python3 docs/lab/cpu-2026-12-05-session35/mutants.py [NAME ...]

Run from the repository root on a clean tree (the file is restored in a finally; `git status`
after a run should show nothing).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
K = ROOT / "kernels"

# name: (file, old, new, pytest -k filter)
MUTANTS = {
    "staged-no-wrap": ("spmv_staged.cu", "k = k + 1 == hi ? lo : k + 1;", "k = k + 1;", "staged"),
    "staged-no-first-barrier": ("spmv_staged.cu", "        __syncthreads();\n\n        // 2. a thread a row",
                                "\n\n        // 2. a thread a row", "staged"),
    "staged-start-by-list": ("spmv_staged.cu", "for (int k = lo + staged_bank_offset<V>(hi - lo, lane), left",
                             "for (int k = lo + (n_listed % 2 == 1 && hi - lo > 1 ? 1 : 0), left", "staged"),
    # the first of common.cuh's two loops is warp_reduce_sum's (the mutant changes the first only)
    "warp-reduce-short": ("common.cuh", "for (int offset = width / 2; offset > 0; offset /= 2) {",
                          "for (int offset = width / 2; offset > 1; offset /= 2) {", "not spmm"),
    "spmm-full-mask": ("spmm_common.cuh", "return ((1u << width) - 1u) << (lane & ~(width - 1));",
                       "return FULL_MASK;", "spmm"),
    "segmented-tail-rest": ("spmv_segmented.cu", "for (long long k = base + TILE + lane; k < stop;",
                            "for (long long k = base + TILE + lane + 1; k < stop;", "segmented"),
    "adaptive2-row-end": ("spmv_adaptive2.cu", "const int hi = offsets[r + 1];", "const int hi = offsets[r + 1] - 1;",
                          "adaptive2"),
    "vector-head-tail": ("spmv_vector.cu", "const I edge = head + (end - body_end);", "const I edge = head;", "vector"),
    # the cut row finished by its last tile in tile order, not by the last to arrive: right only
    # where blocks finish in order (seed 0), so the shuffled block orders must catch it
    "cut-row-by-last-tile": ("common.cuh", "last = atomicAdd(counters + t0, 1u) == static_cast<unsigned>(t1 - t0);",
                             "atomicAdd(counters + t0, 1u);\n        last = slot == head_partials + t1;", "staged"),
    "dia-check-binary-search": ("detect_structure.cu", "if (diagonals[mid] < diagonal) {",
                                "if (diagonals[mid] <= diagonal) {", "structure_passes"),
    "band-first-last-entry": ("detect_structure.cu", "- column != end - start - 1",
                              "- column != end - start", "structure_passes"),
    "structure-longest-row": ("csr_structure.cu", "atomicMax(&out[2], longest);", "atomicMax(&out[2], longest - 1);",
                              "structure_passes"),
    "fused-init-without-beta": ("spmm_fused.cu", "out[r * ldo + c] = use_y_in ? beta * y_in[r * ldy + c] : T(0);",
                                "out[r * ldo + c] = use_y_in ? y_in[r * ldy + c] : T(0);", "fused"),
    "gemv-last-pack": ("gemm/gemv.cu", "for (int i = lane; i < n_vec; i += spla::WARP_SIZE)",
                       "for (int i = lane; i < n_vec - 1; i += spla::WARP_SIZE)", "gemv"),
    "grid-barrier-one-early": ("solver_reduce.cuh", "if (atomic_add_acq_rel(group_count, 1u) == in_group - 1u) {",
                               "if (atomic_add_acq_rel(group_count, 1u) == in_group - 2u) {", "cg_loop"),
    "grid-sum-no-barrier": ("solver_reduce.cuh", "    grid_barrier(sync);\n#pragma unroll", "#pragma unroll",
                            "cg_loop"),
    "last-block-one-early": ("solver_reduce.cuh", "is_last = (ticket == gridDim.x - 1);",
                             "is_last = (ticket == gridDim.x - 2);", "solver or cg_product"),
    "pagerank-dangling-sum": ("solver_pagerank.cu", "if (is_dangling[i]) v[1] +=", "if (!is_dangling[i]) v[1] +=",
                              "pagerank"),
    "trisolve-no-level-barrier": ("solver_trisolve.cu", "        __syncthreads();\n    }", "    }", "triangular"),
    "dia-one-diagonal-short": ("spmv_dia.cu", "for (int d = 0; d < n_diagonals; ++d) {",
                               "for (int d = 0; d + 1 < n_diagonals; ++d) {", "structured"),
}


def run(name: str) -> str:
    filename, old, new, k = MUTANTS[name]
    path = K / filename
    text = path.read_text()
    if old not in text:
        return f"| {name} | {filename} | (the text to change is gone: update the mutant) |"
    try:
        path.write_text(text.replace(old, new, 1))
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               "tests/backends/test_kernels_emulated.py", "-k", k],
                              cwd=ROOT, capture_output=True, text=True)
    finally:
        path.write_text(text)
    if done.returncode < 0:  # a wild read (say, an index from shared memory never written)
        return f"| {name} | {filename} | crashed | pytest ended by signal {-done.returncode} |"
    last = done.stdout.strip().splitlines()[-1]
    failed = re.search(r"(\d+) failed", last)
    return f"| {name} | {filename} | {failed.group(1) if failed else 0} | {last} |"


if __name__ == "__main__":
    print("| mutant | file | cases failed | pytest |\n| --- | --- | --- | --- |")
    for name in sys.argv[1:] or MUTANTS:
        print(run(name), flush=True)
