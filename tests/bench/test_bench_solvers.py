"""spla.bench.solvers: the launches a captured CG solve records, for timing them back to back."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from spla import CSRMatrix
from spla.bench.solvers import cg_iteration_launches


def _poisson2d(n):
    one = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
    return (sp.kron(sp.identity(n), one) + sp.kron(one, sp.identity(n))).tocsr()


def test_nothing_is_recorded_on_the_cpu():
    A = CSRMatrix.from_scipy(_poisson2d(8))
    assert cg_iteration_launches(A, np.ones(A.n_rows)) is None


@pytest.mark.gpu
@pytest.mark.parametrize("fused", [True, False])
def test_recorded_launches_run_two_iterations_without_a_sync(fused):
    import cupy

    from spla.backends.cuda.timing import queued_device_seconds
    from spla.linalg import _krylov

    A = CSRMatrix.from_scipy(_poisson2d(64)).to_device()
    b = cupy.ones(A.n_rows)
    recorded = cg_iteration_launches(A, b, fused=fused)
    assert recorded is not None and recorded.fused == fused
    assert (_krylov._capture.__name__, _krylov._fused_product.__name__, _krylov._fused_loop.__name__) == \
        ("_capture", "_fused_product", "_fused_loop")
    assert queued_device_seconds(recorded.launches, 16) > 0  # raises if a launch synchronised
