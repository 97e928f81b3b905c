"""Iterative solvers with SciPy's signatures, on the CPU (NumPy) and the GPU (CuPy).

``x, info = cg(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None,
callback=None)`` and likewise :func:`bicgstab`, :func:`gmres` (``restart=20``),
:func:`minres`; :func:`block_cg` for an n x k block of right-hand sides;
:func:`jacobi` builds a diagonal preconditioner, :func:`amg` a smoothed-aggregation
multigrid one (set-up on the matrix's side, or through pyamg; cycle on b's side), :func:`ilu0` and
:func:`ic0` incomplete factorisations (in a multicolour ordering by default)
applied by level-scheduled triangular solves (:func:`spsolve_triangular`,
:class:`TriangularSolver`). NumPy in -> NumPy out, CuPy in -> CuPy out; a
:class:`spla.CSRMatrix` goes to whichever side b is on.

``info``: 0 converged (``||b - A x|| <= max(rtol ||b||, atol)``), > 0 the
iterations run without converging, < 0 breakdown: -1 (cg: ``p.Ap`` zero or
not finite; minres: A or M not symmetric / M not positive definite), -10
(bicgstab: ``rho`` vanished), -11 (bicgstab: ``omega`` or ``r~.v`` vanished).

On the GPU, cg and bicgstab check convergence every ``check_every``
iterations (default :data:`DEFAULT_GPU_CHECK_EVERY`), so they may run up to
that many iterations past SciPy's stopping point; pass ``check_every=1`` to
stop exactly where SciPy does. ``callback=IterationCounter()`` counts the
iterations (``.iterations``) without turning off cg's captured GPU iterations.

See Also
--------
scipy.sparse.linalg, cupyx.scipy.sparse.linalg
"""

from ._amg import AMGPreconditioner, amg, amg_solve
from ._block import block_cg
from ._krylov import IterationCounter, bicgstab, cg, gmres, minres
from ._system import DEFAULT_GPU_CHECK_EVERY, JacobiPreconditioner, aslinearoperator, jacobi, make_system
from ._triangular import (
                          IC0Preconditioner,
                          ILU0Preconditioner,
                          SingularTriangularError,
                          TriangularSolver,
                          ic0,
                          ilu0,
                          level_sets,
                          spsolve_triangular,
)

__all__ = ["cg", "bicgstab", "gmres", "minres", "IterationCounter", "block_cg", "jacobi", "JacobiPreconditioner",
           "aslinearoperator", "make_system", "DEFAULT_GPU_CHECK_EVERY", "amg", "amg_solve", "AMGPreconditioner",
           "ilu0", "ic0", "ILU0Preconditioner", "IC0Preconditioner", "spsolve_triangular", "TriangularSolver",
           "SingularTriangularError", "level_sets"]
