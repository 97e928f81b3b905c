"""Krylov solvers with SciPy's signatures: cg, bicgstab, gmres, minres.

Each is written once; :mod:`._kernels` supplies the NumPy or CuPy vector
steps. The return convention is SciPy's ``(x, info)``:

==========  ===============================================================
``info``    meaning
==========  ===============================================================
0           converged: ``||b - A x|| <= max(rtol * ||b||, atol)``
> 0         not converged; the number of iterations run (``maxiter``)
-1          breakdown (cg: ``p.Ap`` zero or not finite, i.e. A singular or
            not definite along the search direction; minres: A or M not
            symmetric, or M not positive definite)
-10         bicgstab: ``rho = r~.r`` vanished
-11         bicgstab: ``omega`` or ``r~.v`` vanished
==========  ===============================================================

-1 is also what every solver returns when NaN or Inf appears (in b, or in a
residual or recurrence scalar because A or M holds them), at once rather
than after ``maxiter`` useless iterations; it is never reported as converged.

On breakdown the last x before it is returned.

GPU behaviour: with CuPy arrays every vector operation and every scalar
stays on the device (fused kernels, see :mod:`._kernels`); the host reads
the residual norm only every ``check_every`` iterations
(:data:`DEFAULT_GPU_CHECK_EVERY` = 8, each check one sync of ~10-20 us), so
up to ``check_every - 1`` more iterations than SciPy may run, and the
returned x is the later, more accurate one (except CG on small systems,
whose one-launch loop tests convergence on the device after every iteration:
see ``capture``). ``check_every=1`` checks every iteration as SciPy does;
it is also the default under a preconditioner that asks for it
(``M.solver_check_every``: an AMG cycle costs tens of launches and most of a
millisecond on large problems, so an iteration run past convergence costs far
more than a check). GMRES and MINRES keep their small scalar
recurrences on the host (a Givens rotation per step); their convergence test
needs those, so they synchronise once per (inner) iteration.
"""

from __future__ import annotations

import math

import numpy as np

from ..backends.cpu import CgLoop as CpuCgLoop
from ..backends.cpu import dot as cpu_dot
from ..device import array_module, to_host
from ..errors import InputError
from ._kernels import FLAG, kernels_for
from ._system import absolute_tolerance, default_maxiter, make_system, or_identity

_PARAMETERS_DOC = """
    Parameters
    ----------
    A : CSRMatrix, scipy/cupyx sparse matrix, dense array or LinearOperator
        The n x n matrix. NumPy/SciPy operands run on the CPU, CuPy/cupyx
        ones on the GPU; a CSRMatrix goes to whichever side ``b`` is on.
    b : 1-D numpy.ndarray or cupy.ndarray, shape (n,) or (n, 1)
    x0 : array like b, optional
        Starting guess (default zeros). Copied, never modified.
    rtol, atol : float
        Converged when ``||b - A x|| <= max(rtol * ||b||, atol)``.
    maxiter : int, optional
        Iteration limit (default 10 n; for gmres it counts restart cycles).
    M : matrix, LinearOperator or :func:`jacobi` result, optional
        Preconditioner approximating A^{-1}.
    callback : callable, optional
        ``callback(xk)`` after every iteration, with the current iterate. An
        :class:`IterationCounter` only counts, and keeps cg's GPU paths that
        any other callback turns off (see ``capture``).
    check_every : int, optional
        Iterations between convergence checks; default 1 on the CPU and
        ``DEFAULT_GPU_CHECK_EVERY`` on the GPU, or ``M.solver_check_every``
        when M has it (see the module notes).
    capture : bool, optional
        cg only, GPU only: run many iterations without Python (default on
        where it applies: a sparse A, no callback, M None or :func:`jacobi`).
        Small systems (up to ``CG_LOOP_MAX_ROWS`` rows of the CUDA backend,
        A's SpMV a row kernel) run whole iterations in one cooperative launch
        that tests convergence on the device after each, so they stop where
        SciPy would and ``check_every`` does not apply; larger ones record two
        iterations' launches once into a CUDA graph and replay it between
        checks (``check_every >= 2``). The iterates are those of
        ``capture=False``, which launches the small systems' loop once an
        iteration and the others' kernels one by one from Python (for
        debugging).

    Returns
    -------
    x : array on b's side, dtype float32 if A and b are float32 else float64
    info : int
        0 converged, > 0 iterations run without converging, < 0 breakdown
        (codes in :mod:`spla.linalg`).
"""


NONFINITE = -1  # info for NaN/Inf met in b, A or M
LOOP_CONVERGED = 6  # where the one-launch CG loop marks convergence in CG's state
LOOP_LAST = 7  # where it writes the last iteration it ran


class IterationCounter:
    """A ``callback=`` that counts the iterations a solver runs, in ``.iterations``.

    Called as a callback, it adds one a call, so it counts SciPy's (and any
    solver's) iterations the usual way. :func:`cg` knows it: it runs as if
    no callback were given, keeping the GPU's captured and one-launch
    iterations (which a callback needs Python between iterations to
    serve), and adds the iterations it ran when it returns: the count a
    plain callback would have seen.
    """

    def __init__(self) -> None:
        self.iterations = 0

    def __call__(self, xk=None) -> None:
        self.iterations += 1

    def __repr__(self) -> str:
        return f"<spla.linalg.IterationCounter {self.iterations} iterations>"


def _counted(counter: IterationCounter | None, iterations: int, result: tuple) -> tuple:
    """``result`` (x, info), after adding ``iterations`` to ``counter`` where there is one."""
    if counter is not None:
        counter.iterations += iterations
    return result


def _norm(xp, v) -> float:
    """||v||; on the host without BLAS (:func:`spla.backends.cpu.dot`), whose idle threads would
    spin on the cores CG's C loop is about to use."""
    if xp is np and v.ndim == 1:
        return math.sqrt(cpu_dot(v, v))
    return float(xp.linalg.norm(v))


def _start(name, system, rtol, atol, maxiter, maxiter_factor=10):
    """What every solver does first, in SciPy's order: the absolute tolerance
    (refusing negative ones), (x, NONFINITE) for NaN/Inf in b, the iteration
    limit, and (zeros, 0) for b = 0. Returns ``(b_norm, atol, maxiter, done)``,
    where ``done`` is the answer when no iteration is needed, else None."""
    xp = system.xp
    b_norm = _norm(xp, system.b)
    atol = absolute_tolerance(name, b_norm, rtol, atol)
    if not math.isfinite(b_norm):
        return b_norm, atol, maxiter, (system.x, NONFINITE)  # no iteration can converge
    maxiter = default_maxiter(maxiter, system.n, factor=maxiter_factor)
    if b_norm == 0:
        return b_norm, atol, maxiter, (xp.zeros_like(system.b), 0)
    return b_norm, atol, maxiter, None


def _initial_residual(system):
    if system.x0_given:
        return system.b - system.matvec(system.x)
    return system.b.copy()


def cg(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, callback=None, check_every=None,
       capture=None):
    system = make_system(A, b, x0, M, check_every=check_every)
    xp, x, n = system.xp, system.x, system.n
    _, atol, maxiter, done = _start("cg", system, rtol, atol, maxiter)
    if done is not None:
        return done
    counter = callback if isinstance(callback, IterationCounter) else None
    if counter is not None:
        callback = None  # counted from the iterations run, not called between them
    K = kernels_for(xp, n, system.dtype)
    r = _initial_residual(system)
    if _norm(xp, r) < atol:
        return x, 0
    dinv = system.inverse_diagonal
    general_m = system.psolve is not None and dinv is None
    capture = wants_capture(capture, system, callback, general_m, system.matrix is not None)
    loop = None if general_m else _fused_loop(system, K, dinv is not None)
    # state: flag, p.Ap, then (rho, r.r) for the even and the odd iteration; the one-launch
    # loop's converged flag and last iteration. A loop keeps its scalars in float64 on either side.
    state = K.state(8) if loop is None else xp.zeros(8, dtype=np.float64)
    z = system.psolve(r) if system.psolve is not None else r
    if isinstance(loop, CpuCgLoop):
        state[2] = cpu_dot(r, z)  # not NumPy's dot: see _norm
    else:
        K.dot(r, z, state[2:3])
    if loop is not None:
        # the GPU's loop runs batches under capture only (capture=False: a launch an iteration);
        # the CPU's whenever no callback needs the iterates one at a time
        batch = capture or (callback is None and loop.batches_uncaptured)
        return loop_iterations(xp, loop, x, r, z, state, dinv=dinv, maxiter=maxiter, atol=atol,
                               callback=callback, fetch=K.fetch, batch=batch, counter=counter)
    product = _fused_product(system, K)
    matvec_into = system.matvec_into() if capture and product is None else None
    return cg_iterations(xp, K, x, r, z, state, matvec=system.matvec, matvec_into=matvec_into, product=product,
                         capture=capture, psolve=system.psolve, dinv=dinv, check_every=system.check_every,
                         maxiter=maxiter, atol=atol, callback=callback, fetch=K.fetch, counter=counter)


def _fused_product(system, K):
    """The CUDA backend's one-launch CG product over A's SpMV (see :func:`cg_iterations`), or
    None: off the GPU, for an operator that is not a CSR matrix, or where the kernel ``auto``
    runs for A is not a plain row kernel (vector, adaptive, segmented, cuSPARSE)."""
    if not system.on_gpu or system.matrix is None:
        return None
    return K.cg_product(system.spmv_launcher())


def _fused_loop(system, K, jacobi: bool):
    """Whole CG iterations in one call (:func:`loop_iterations`) for a CSR matrix: the CPU
    backend's C loop on threads, or the CUDA backend's one-launch loop where the system is small
    enough and A's SpMV is a plain row kernel; else None."""
    if system.matrix is None:
        return None
    if not system.on_gpu:
        return K.cg_loop(system.matrix, jacobi)
    return K.cg_loop(system.spmv_launcher(), jacobi)


def loop_iterations(xp, loop, x, r, z, state, *, dinv, maxiter, atol, callback, fetch, batch, counter=None):
    """CG's iterations as launches of a ``CgLoop`` (the CUDA backend's whole iterations in one
    kernel), once r, z and rho are set up as for :func:`cg_iterations`. The kernel tests
    convergence after every iteration itself and stops there (``state[6]``), so the loop ends
    where SciPy's would, whatever ``check_every``. With ``batch`` a launch runs up to
    ``loop.batch`` iterations and the host reads the state once a launch; without it (a
    callback, or ``capture=False``) a launch runs one iteration and the host reads the state
    after each. The iterates are the same either way. ``counter`` (an :class:`IterationCounter`)
    gets the iterations run."""
    directions = (xp.empty_like(r), z.copy())  # p_k in directions[k % 2]; p_1 = z
    if dinv is None:
        z = dinv = r  # not read: without Jacobi, z is r
    else:
        z = xp.empty_like(r)  # the loop writes D^{-1} r here
    q = xp.empty_like(r)
    iteration = 0
    while iteration < maxiter:
        count = min(loop.batch, maxiter - iteration) if batch else 1
        loop.run(iteration + 1, count, x, r, z, dinv, directions, q, state, atol)
        iteration += count
        if callback is not None:
            callback(x)
        host = fetch(state)
        if host[FLAG] or host[LOOP_CONVERGED]:  # the kernel stopped after iteration host[LOOP_LAST]
            return _counted(counter, int(host[LOOP_LAST]), (x, -1 if host[FLAG] else 0))
    return _counted(counter, maxiter, (x, maxiter))


def _no_reduction(partial) -> None:
    """One process holds every entry: a local dot product is the whole one."""


def cg_iterations(xp, K, x, r, z, state, *, matvec, matvec_into, psolve, dinv, check_every, maxiter, atol,
                  callback, fetch, reduce=_no_reduction, stop_on_nonfinite=False, product=None, capture=True,
                  counter=None):
    """CG's iterations once r, z = M^{-1} r and rho = r.z (in ``state[2]``) are set up: the loop
    :func:`cg` and ``spla.distributed.cg`` share. Returns (x, info).

    The product step is ``product`` where given (a ``CgProduct`` of the CUDA backend: ``q = A p``
    with ``p.q`` in one launch, and from the second iteration the direction update
    ``p = z + beta p`` in that launch too, so p alternates between two buffers), else
    ``matvec_into(p, q)`` (or ``q = matvec(p)`` without it), a dot product and a separate
    direction update. With ``capture``, and ``product`` or ``matvec_into`` given (neither
    allocates), two iterations are recorded once into a CUDA graph and replayed between
    convergence checks; both ways run the same launches, so the iterates are the same.
    ``reduce`` sums a partial dot product over ranks in place (after every local reduction);
    ``fetch`` reads the state on the host, every ``check_every`` iterations only; ``counter`` (an
    :class:`IterationCounter`) gets the iterations run.
    """
    general_m = psolve is not None and dinv is None
    pq = state[1:2]
    rho_and_rr = (state[2:4], state[4:6])
    if product is not None:
        # p of iteration k lives in directions[k % 2]; the first is z itself
        directions = (xp.empty_like(r), z.copy())
    else:
        p = z.copy()
    if dinv is not None:
        z = xp.empty_like(r)  # the fused step writes D^{-1} r here
    # one-element views made once: a captured graph must see the same pointers every replay
    views = [(rho_and_rr[(k - 1) % 2][:1], rho_and_rr[k % 2], rho_and_rr[k % 2][:1], rho_and_rr[k % 2][1:])
             for k in (0, 1)]
    replay = capture and (product is not None or matvec_into is not None)
    q = xp.empty_like(r) if product is not None or matvec_into is not None else None

    def steps(iteration):
        nonlocal q, z
        rho, fresh, fresh_first, fresh_rest = views[iteration % 2]
        if product is not None:
            p_k = directions[iteration % 2]
            if iteration == 1:
                product.product(p_k, q, pq)
            else:  # beta = rho of the last iteration (rho here) / of the one before (not yet overwritten)
                product.direction_product(directions[(iteration - 1) % 2], z, rho, fresh_first, p_k, q, pq)
        else:
            p_k = p
            if matvec_into is not None:
                matvec_into(p_k, q)
            else:
                q = matvec(p_k)
            K.dot(p_k, q, pq)
        reduce(pq)
        if dinv is not None:
            K.cg_step(x, r, z, p_k, q, dinv, rho, pq, state, fresh)
            reduce(fresh)
        elif general_m:
            K.cg_step(x, r, None, p_k, q, None, rho, pq, state, fresh_rest)
            z = psolve(r)
            K.dot(r, z, fresh_first)
            reduce(fresh)
        else:
            K.cg_step(x, r, None, p_k, q, None, rho, pq, state, fresh_first)
            reduce(fresh_first)

    def direction(iteration):
        if product is None:  # the product forms the next direction itself
            rho, _, fresh_first, _ = views[iteration % 2]
            K.cg_direction(p, z, fresh_first, rho)

    def two_iterations():
        for k in (3, 4):  # an odd and an even iteration after the first
            steps(k)
            direction(k)

    graph = None
    iteration = 0
    while iteration < maxiter:
        following = iteration + 1
        # a replay runs an odd and an even iteration, and only between convergence checks
        if (replay and iteration >= 2 and following % 2 == 1 and following < maxiter
                and following % check_every != 0):
            if graph is None:
                graph = _capture(xp, two_iterations)
                if graph is None:
                    replay = False  # capture refused: go on launching one kernel at a time
                    continue
            graph.launch()
            iteration += 2
            directed = True
        else:
            steps(following)
            iteration = following
            directed = False
        if callback is not None:
            callback(x)
        if iteration % check_every == 0 or iteration == maxiter:
            host = fetch(state)
            if host[FLAG]:
                return _counted(counter, iteration, (x, -1))
            rr = float(host[2 * (1 + iteration % 2) + (0 if psolve is None else 1)])
            if stop_on_nonfinite and not math.isfinite(rr):
                return _counted(counter, iteration, (x, NONFINITE))
            if math.sqrt(max(rr, 0.0)) < atol:
                return _counted(counter, iteration, (x, 0))
        if not directed:
            direction(iteration)
    return _counted(counter, maxiter, (x, maxiter))


def wants_capture(capture, system, callback, general_m, capturable: bool) -> bool:
    """Capture CG's iterations into a CUDA graph? Default yes on the GPU where it applies: no callback
    between iterations, no general preconditioner, and ``capturable`` (what the caller's system
    adds: spla.linalg's has a matrix, not a LinearOperator; spla.distributed's one rank, since
    host-side MPI cannot be captured)."""
    if capture is not None and not isinstance(capture, bool):
        raise InputError(f"capture must be True, False or None, got {capture!r}")
    if capture is False or not system.on_gpu or callback is not None or general_m or not capturable:
        return False
    return hasattr(system.xp.cuda.Stream, "begin_capture")


def _refuse_allocation(size):
    raise MemoryError("spla.linalg: no allocation may happen inside a captured solver iteration")


def _capture(xp, launches):
    """A ``cupy.cuda.Graph`` of what ``launches()`` queues, or None where capture fails.

    Capture runs on a fresh stream (the legacy default stream cannot be
    captured) with allocation refused: memory the pool handed out inside the
    capture would be freed, and reused, while the graph still writes it.
    Nothing runs during capture, so a refused capture changes no state.
    """
    errors = (MemoryError, RuntimeError, xp.cuda.runtime.CUDARuntimeError, xp.cuda.driver.CUDADriverError)
    stream = xp.cuda.Stream(non_blocking=True)
    graph = None
    with stream, xp.cuda.using_allocator(_refuse_allocation):
        try:
            stream.begin_capture()
        except errors:
            return None
        try:
            launches()
        except errors:
            pass  # end_capture below then fails too (an invalidated capture) or is discarded
        else:
            try:
                graph = stream.end_capture()
            except errors:
                graph = None
            return graph
        try:
            stream.end_capture()
        except errors:
            pass
    return graph


def bicgstab(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, callback=None, check_every=None):
    system = make_system(A, b, x0, M, check_every=check_every)
    xp, x, n = system.xp, system.x, system.n
    _, atol, maxiter, done = _start("bicgstab", system, rtol, atol, maxiter)
    if done is not None:
        return done
    K = kernels_for(xp, n, system.dtype)
    psolve = or_identity(system.psolve)
    r = _initial_residual(system)
    if _norm(xp, r) < atol:
        return x, 0
    return bicgstab_iterations(xp, K, x, r, matvec=system.matvec, psolve=psolve, check_every=system.check_every,
                               maxiter=maxiter, atol=atol, callback=callback, fetch=K.fetch)


def bicgstab_iterations(xp, K, x, r, *, matvec, psolve, check_every, maxiter, atol, callback, fetch,
                        reduce=_no_reduction):
    """BiCGSTAB's iterations from the initial residual r: the loop :func:`bicgstab` and
    ``spla.distributed.bicgstab`` share. Returns (x, info). The scalars live in one device array
    (breakdown flagged there by the kernels, read at the checks); ``reduce`` sums a partial dot
    product over ranks in place (after every local reduction); ``fetch`` reads the state on the
    host, every ``check_every`` iterations only."""
    rhotol = float(np.finfo(x.dtype).eps) ** 2  # SciPy's (Fortran-inherited) breakdown threshold
    r_tilde = r.copy()
    p = xp.empty_like(r)
    v = xp.zeros_like(r)
    # state: flag, rho (even/odd iteration), alpha, omega, r~.v, t.s, t.t, r.r
    state = K.state(9)
    rhos = (state[1:2], state[2:3])
    alpha, omega, rv, ts, tt, rr = (state[i:i + 1] for i in range(3, 9))
    ts_and_tt = state[6:8]
    for iteration in range(1, maxiter + 1):
        rho, rho_prev = rhos[iteration % 2], rhos[(iteration - 1) % 2]
        K.dot(r_tilde, r, rho)
        reduce(rho)
        K.bicgstab_direction(p, r, v, rho, rho_prev, alpha, omega, iteration == 1, rhotol, state)
        p_hat = psolve(p)
        v = matvec(p_hat)
        K.dot(r_tilde, v, rv)
        reduce(rv)
        K.bicgstab_half(r, v, rho, rv, alpha, state)  # r becomes s = r - alpha v
        s_hat = psolve(r)
        t = matvec(s_hat)
        K.dot(t, r, ts)
        K.dot(t, t, tt)
        reduce(ts_and_tt)
        K.bicgstab_finish(x, r, p_hat, s_hat, t, alpha, omega, ts, tt, state)
        if callback is not None:
            callback(x)
        if iteration % check_every == 0 or iteration == maxiter:
            K.dot(r, r, rr)
            reduce(rr)
            host = fetch(state)
            if host[FLAG]:
                return x, -int(host[FLAG])
            if not math.isfinite(host[8]):
                return x, NONFINITE
            if math.sqrt(max(float(host[8]), 0.0)) < atol:
                return x, 0
    return x, maxiter


def _lartg(f: float, g: float):
    """A Givens rotation (c, s, r) with c f + s g = r, -s f + c g = 0."""
    if g == 0:
        return 1.0, 0.0, f
    if f == 0:
        return 0.0, math.copysign(1.0, g), abs(g)
    r = math.copysign(math.hypot(f, g), f)
    return f / r, g / r, r


def gmres(A, b, x0=None, *, rtol=1e-5, atol=0.0, restart=None, maxiter=None, M=None, callback=None,
          callback_type=None):
    system = make_system(A, b, x0, M)
    xp, x, n = system.xp, system.x, system.n
    b_norm, atol, maxiter, done = _start("gmres", system, rtol, atol, maxiter)
    if done is not None:
        return done
    callback_type, restart = gmres_options(callback_type, restart, n)
    psolve = or_identity(system.psolve)
    eps = float(np.finfo(system.dtype).eps)
    # SciPy's inner tolerance control (gh-8400): the Arnoldi loop watches the
    # preconditioned residual estimate, rescaled after each outer residual.
    ptol_max_factor = 1.0
    ptol = _norm(xp, psolve(system.b)) * min(ptol_max_factor, atol / b_norm)
    V = xp.empty((restart + 1, n), dtype=system.dtype)
    r = _initial_residual(system)
    r_norm = _norm(xp, r)
    if r_norm < atol:
        return x, 0
    for _cycle in range(maxiter):
        V[0] = psolve(r)
        beta = _norm(xp, V[0])
        V[0] /= beta
        H = np.zeros((restart + 1, restart))  # Hessenberg, on the host (small)
        givens = np.zeros((restart, 2))
        g = np.zeros(restart + 1)
        g[0] = beta
        breakdown = False
        for col in range(restart):
            w = psolve(system.matvec(V[col]))
            h0 = xp.linalg.norm(w)
            # classical Gram-Schmidt twice: two matrix-vector products instead of
            # col dot products, as stable as SciPy's modified Gram-Schmidt
            basis = V[:col + 1]
            h = basis @ w
            w -= h @ basis
            h2 = basis @ w
            w -= h2 @ basis
            h1 = xp.linalg.norm(w)
            # the one host round trip of this inner iteration: the Givens update needs the column
            column = to_host(xp.concatenate((h + h2, xp.stack((h1, h0)))))
            h0 = column[-1]
            column = column[:-1]
            h1 = column[-1]
            if h1 <= eps * h0:
                column[-1] = 0.0
                breakdown = True
            else:
                V[col + 1] = w / h1
            residual_estimate = givens_step(H, givens, g, column, col)
            if callback is not None and callback_type == "pr_norm":
                callback(residual_estimate / b_norm)
            if residual_estimate <= ptol or breakdown:
                break
        y = upper_triangular_solve(H[:col + 1, :col + 1], g[:col + 1])
        x += xp.asarray(y.astype(system.dtype)) @ V[:col + 1]
        r = system.b - system.matvec(x)
        r_norm = _norm(xp, r)
        if not math.isfinite(r_norm):
            return x, NONFINITE
        if callback is not None and callback_type == "x":
            callback(x)
        if r_norm <= atol or breakdown:
            break
        ptol, ptol_max_factor = inner_tolerance(residual_estimate, ptol, ptol_max_factor, eps, atol, r_norm)
    return x, (0 if r_norm <= atol else maxiter)


def gmres_options(callback_type, restart, n: int) -> tuple[str, int]:
    """GMRES's callback_type (SciPy's default "pr_norm") and restart (20, at most n), checked."""
    if callback_type is None:
        callback_type = "pr_norm"
    if callback_type not in ("x", "pr_norm"):
        raise InputError(f"callback_type must be 'x' or 'pr_norm', got {callback_type!r}")
    restart = min(20 if restart is None else int(restart), n)
    if restart < 1:
        raise InputError(f"restart must be >= 1, got {restart}")
    return callback_type, restart


def givens_step(H, givens, g, column, col: int) -> float:
    """GMRES's Hessenberg column ``col`` (host float64, ``col + 2`` entries) rotated by the earlier
    Givens rotations and a new one that zeroes its last entry; stores it in H, the rotation in
    ``givens`` and the rotated right-hand side in g. Returns the residual estimate |g[col + 1]|."""
    for k in range(col):
        c, s = givens[k]
        column[k], column[k + 1] = c * column[k] + s * column[k + 1], -s * column[k] + c * column[k + 1]
    c, s, mag = _lartg(column[col], column[col + 1])
    givens[col] = c, s
    column[col], column[col + 1] = mag, 0.0
    H[:col + 2, col] = column
    g[col], g[col + 1] = c * g[col], -s * g[col]
    return abs(g[col + 1])


def inner_tolerance(residual_estimate: float, ptol: float, factor: float, eps: float, atol: float,
                    r_norm: float) -> tuple[float, float]:
    """SciPy's control of GMRES's inner tolerance after a restart (gh-8400): the next (ptol,
    factor), tightened where the cycle met its estimate, loosened where it did not."""
    factor = max(eps, 0.25 * factor) if residual_estimate <= ptol else min(1.0, 1.5 * factor)
    return residual_estimate * min(factor, atol / r_norm), factor


def upper_triangular_solve(R, g):
    """Back substitution that skips zero pivots (a singular Hessenberg after breakdown), like SciPy."""
    m = R.shape[0]
    y = g.astype(np.float64).copy()
    for k in range(m - 1, -1, -1):
        if R[k, k] == 0:
            y[k] = 0.0
        else:
            y[k] /= R[k, k]
        y[:k] -= y[k] * R[:k, k]
    return y


def minres(A, b, x0=None, *, rtol=1e-5, atol=0.0, shift=0.0, maxiter=None, M=None, callback=None):
    system = make_system(A, b, x0, M)
    xp = system.xp
    _, atol, maxiter, done = _start("minres", system, rtol, atol, maxiter, maxiter_factor=5)
    if done is not None:
        return done
    return minres_iterations(system.x, _initial_residual(system), system.b, matvec=system.matvec,
                             psolve=system.psolve, dot=lambda u, v: xp.dot(u, v).reshape(1), fetch=to_host,
                             norm=lambda v: _norm(xp, v), shift=shift, maxiter=maxiter, atol=atol,
                             callback=callback)


def minres_iterations(x, r1, b, *, matvec, psolve, dot, fetch, norm, shift, maxiter, atol, callback):
    """Paige & Saunders' MINRES recurrences (as in SciPy) from x and its residual r1, x updated in
    place; the scalars live on the host. Written once for :func:`minres` and a rank's part of
    :func:`spla.distributed.minres`, which differ only in their hooks: ``dot(u, v)`` is a
    one-element array where u and v live (summed over the ranks there), ``fetch`` reads such
    arrays to the host (an iteration's one synchronisation), ``norm(v)`` is the global ||v||."""
    xp = array_module(r1)
    dtype = r1.dtype.type
    eps = float(np.finfo(r1.dtype).eps)
    psolve = or_identity(psolve)
    if norm(r1) < atol:
        return x, 0
    y = psolve(r1)
    beta1 = float(fetch(dot(r1, y))[0])
    if not math.isfinite(beta1):
        return x, NONFINITE
    if beta1 < 0:
        return x, -1
    if beta1 == 0:
        return x, 0
    beta1 = math.sqrt(beta1)
    old_beta, beta = 0.0, beta1
    dbar = epsln = 0.0
    phibar = beta1
    cs, sn = -1.0, 0.0
    w = xp.zeros_like(r1)
    w2 = xp.zeros_like(r1)
    r2 = r1
    for iteration in range(1, maxiter + 1):
        v = y * dtype(1.0 / beta)
        y = matvec(v)
        if shift:
            y = y - dtype(shift) * v
        if iteration >= 2:
            y = y - dtype(beta / old_beta) * r1
        alfa = dot(v, y)  # stays where it lies until read with beta below
        y = y - (alfa / beta).astype(r1.dtype) * r2
        r1, r2 = r2, y
        y = psolve(r2)
        old_beta = beta
        alfa, beta = (float(s) for s in fetch(xp.concatenate((alfa, dot(r2, y)))))
        if not (math.isfinite(alfa) and math.isfinite(beta)):
            return x, NONFINITE
        if beta < 0:
            return x, -1
        beta = math.sqrt(beta)
        old_eps = epsln
        delta = cs * dbar + sn * alfa
        gbar = sn * dbar - cs * alfa
        epsln = sn * beta
        dbar = -cs * beta
        gamma = max(math.hypot(gbar, beta), eps)
        cs, sn = gbar / gamma, beta / gamma
        phi = cs * phibar
        phibar = sn * phibar
        w1, w2 = w2, w
        w = (v - dtype(old_eps) * w1 - dtype(delta) * w2) * dtype(1.0 / gamma)
        x += dtype(phi) * w
        if callback is not None:
            callback(x)
        # phibar estimates ||r|| (the M^-1 norm when preconditioned): confirm with the true residual
        if phibar < atol or beta == 0.0:
            if norm(b - matvec(x)) < atol:
                return x, 0
            if beta == 0.0:  # the Krylov space is exhausted: x is as good as MINRES gets
                return x, iteration
    return x, maxiter


for _solver, _summary, _see_also in (
    (cg, "Solve ``A x = b`` by the conjugate gradient method (A symmetric positive definite).",
     "scipy.sparse.linalg.cg, cupyx.scipy.sparse.linalg.cg"),
    (bicgstab, "Solve ``A x = b`` by BiCGSTAB (any nonsingular A).",
     "scipy.sparse.linalg.bicgstab"),
    (gmres, "Solve ``A x = b`` by restarted GMRES (any nonsingular A).\n\n"
     "    ``restart`` (default 20) is the Krylov dimension per cycle and ``maxiter``\n"
     "    counts cycles, as in SciPy. ``callback_type='pr_norm'`` (default) calls\n"
     "    ``callback(||r_est|| / ||b||)`` after every inner iteration, ``'x'`` calls\n"
     "    ``callback(x)`` after every cycle. Arnoldi uses classical Gram-Schmidt\n"
     "    with one reorthogonalisation (matrix-vector products on the GPU).",
     "scipy.sparse.linalg.gmres, cupyx.scipy.sparse.linalg.gmres"),
    (minres, "Solve ``A x = b`` by MINRES (A symmetric, possibly indefinite; M positive definite).\n\n"
     "    Unlike SciPy's minres (which stops on ``||r|| <= rtol ||A|| ||x||``), spla\n"
     "    stops on the same rule as the other solvers, confirmed with the true\n"
     "    residual; ``shift`` solves ``(A - shift I) x = b``.",
     "scipy.sparse.linalg.minres, cupyx.scipy.sparse.linalg.minres"),
):
    _doc_parameters = _PARAMETERS_DOC
    if _solver is not cg and _solver is not bicgstab:
        _doc_parameters = _doc_parameters.replace(
            "    check_every : int, optional\n"
            "        Iterations between convergence checks; default 1 on the CPU and\n"
            "        ``DEFAULT_GPU_CHECK_EVERY`` on the GPU (see the module notes).\n", "")
    if _solver is not cg:
        _doc_parameters = _doc_parameters[:_doc_parameters.find("    capture : bool")] + \
            _doc_parameters[_doc_parameters.find("    Returns"):]
    _solver.__doc__ = f"""{_summary}
{_doc_parameters}
    See Also
    --------
    {_see_also}
"""
