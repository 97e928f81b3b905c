"""spla.distributed under real MPI jobs: each test launches ``mpiexec -n P`` on a worker script.

dist_worker.py (beside this file) runs a batch of checks on every rank
against SciPy / networkx / spla.linalg, so one launch covers many cases and
the whole file stays within a few seconds per rank count. Every launch has a
timeout, so a hang fails the test instead of stalling CI. Skipped when
mpi4py or an ``mpiexec`` is missing (``pip install 'spla[distributed]'``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from spla import cuda

pytest.importorskip("mpi4py")

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
WORKER = HERE / "dist_worker.py"
LAUNCH_TIMEOUT = 120


def _mpiexec() -> list:
    beside_python = Path(sys.executable).parent / "mpiexec"
    found = str(beside_python) if beside_python.exists() else shutil.which("mpiexec")
    if found is None:
        pytest.skip("no mpiexec on PATH (pip install mpich)")
    version = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=30).stdout
    return [found, "--oversubscribe"] if "Open MPI" in version else [found]


def launch(ranks: int, *args, script=WORKER, module=None, cwd=None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
               OMP_NUM_THREADS="1")
    target = ["-m", module] if module else ["-m", "mpi4py", str(script)]
    try:
        return subprocess.run([*_mpiexec(), "-n", str(ranks), sys.executable, *target, *map(str, args)],
                              capture_output=True, text=True, timeout=LAUNCH_TIMEOUT, env=env, cwd=cwd)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"mpiexec -n {ranks} {' '.join(map(str, args))} hung for {LAUNCH_TIMEOUT} s:\n{exc.stderr}")


def _seed(rng) -> int:
    return int(rng.integers(1 << 31))


@pytest.mark.parametrize("ranks", [1, 2, 4])
def test_spmv_spmm_solvers_pagerank_mtx_against_scipy(ranks, rng, tmp_path):
    """Square/rectangular/empty-row/1x1 SpMV, user partitions (ranks owning no rows), no-ghost blocks,
    SpMM, from_row_blocks, vector algebra, every solver, PageRank, parallel .mtx reads, size mismatch."""
    result = launch(ranks, "checks", _seed(rng), tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "CHECKS OK 32" in result.stdout, result.stdout


@pytest.mark.parametrize("ranks", [1, 3])
def test_bad_input_on_one_rank_ends_every_rank_with_one_message(ranks, rng, tmp_path):
    result = launch(ranks, "bad-block", _seed(rng), tmp_path)
    assert result.returncode != 0
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.stderr
    assert f"on rank {ranks - 1}" in errors[0] and "out of range" in errors[0], errors[0]


def test_exception_outside_agreement_aborts_the_job(rng, tmp_path):
    result = launch(3, "crash", _seed(rng), tmp_path)
    assert result.returncode != 0
    assert "deliberate failure" in result.stderr


@pytest.mark.gpu
def test_gpu_one_rank_nccl(rng, tmp_path):
    pytest.importorskip("cupy.cuda.nccl")
    result = launch(1, "gpu", _seed(rng), tmp_path, "gpu", "nccl")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "CHECKS OK" in result.stdout


@pytest.mark.gpu
def test_gpu_two_ranks_share_one_gpu_host_staged_mpi(rng, tmp_path):
    assert cuda.gpu_available()
    result = launch(2, "gpu", _seed(rng), tmp_path, "gpu", "mpi-staged")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "CHECKS OK" in result.stdout
