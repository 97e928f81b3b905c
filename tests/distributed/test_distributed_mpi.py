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

from spla import device

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
    # Open MPI refuses root without these (the GPU machines run tests as root); MPICH ignores them
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
               OMP_NUM_THREADS="1", OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
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


@pytest.mark.parametrize("ranks", [1, 2])
def test_solver_iterations_sum_in_place_and_read_the_host_only_at_checks(ranks, rng, tmp_path):
    """Counted through a stand-in communicator: cg/bicgstab/block_cg iterations add a fixed number of
    in-place sums over ranks and no host-returning one, read the host every check_every iterations,
    call no MPI at all on one rank, and agree with spla.linalg; gmres/minres read the host once per
    iteration; products reusing exchange buffers keep earlier results intact."""
    result = launch(ranks, "cadence", _seed(rng), tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "CHECKS OK 16" in result.stdout, result.stdout


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
    assert device.gpu_available()
    result = launch(2, "gpu", _seed(rng), tmp_path, "gpu", "mpi-staged")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "CHECKS OK" in result.stdout


@pytest.mark.gpu
def test_gpu_one_rank_nccl_cadence_loop_graph_replay_and_bound_product(rng, tmp_path):
    """One rank on the GPU: no sum over ranks at all, host reads only at checks, cg runs its
    one-launch loop on a small system (the iterates of launching, to rounding) or replays a CUDA
    graph (same iterates as launching), and A @ x is spla.spmv's bound launch (bit-identical)."""
    pytest.importorskip("cupy.cuda.nccl")
    result = launch(1, "cadence", _seed(rng), tmp_path, "gpu", "nccl")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "CHECKS OK 19" in result.stdout, result.stdout


@pytest.mark.gpu
def test_gpu_two_ranks_host_staged_cadence(rng, tmp_path):
    assert device.gpu_available()
    result = launch(2, "cadence", _seed(rng), tmp_path, "gpu", "mpi-staged")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "CHECKS OK 16" in result.stdout, result.stdout


def test_cli_spmv_solve_pagerank_distributed_report_once(tmp_path, rng):
    import json

    import numpy as np
    import scipy.sparse.linalg

    import spla

    source = "gen:poisson2d:24"
    A = spla.load(source).to_scipy()
    result = launch(2, "spmv", source, "--distributed", "--dtype", "float64", "--json", module="spla")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)  # one JSON document: only rank 0 printed
    assert [r["rank"] for r in report["ranks"]] == [0, 1]
    assert sum(r["nnz"] for r in report["ranks"]) == report["nnz"] == A.nnz
    assert report["relative_error"] < 1e-12
    assert report["exchange_entries"] == sum(r["ghosts"] for r in report["ranks"]) > 0
    result = launch(2, "solve", source, "--distributed", "--json", "--rtol", "1e-10", module="spla")
    assert result.returncode == 0, result.stderr
    solved = json.loads(result.stdout)
    _, info = scipy.sparse.linalg.cg(A, np.ones(A.shape[0]), rtol=1e-10)
    assert solved["info"] == info == 0 and solved["relative_residual"] < 1e-10
    import scipy.io
    import scipy.sparse as sp

    graph = tmp_path / "graph.mtx"  # a plain .mtx: the CLI reads it in parallel
    scipy.io.mmwrite(graph, sp.random(300, 300, density=0.02, random_state=rng, format="csr"))
    result = launch(2, "pagerank", graph, "--distributed", "--json", "--top", "3", "--tol", "1e-10", module="spla")
    assert result.returncode == 0, result.stderr
    ranks = spla.pagerank(spla.load(graph, cache=False), tol=1e-10, device="cpu")
    top = json.loads(result.stdout)["top"]
    np.testing.assert_allclose([t["rank"] for t in top], np.sort(ranks)[::-1][:3], rtol=1e-8)
    result = launch(2, "spmv", str(tmp_path / "missing.mtx"), "--distributed", module="spla")
    assert result.returncode != 0
    assert result.stderr.count("spla: error:") == 1, result.stderr
