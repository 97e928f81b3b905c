"""The Krylov solvers' vector steps on the GPU: fused raw kernels and ElementwiseKernels.

:class:`DeviceKernels` implements the interface of
:class:`spla.linalg._kernels.HostKernels` with one launch per step: ``x += a p;
r -= a q`` together with the new ``r.r`` (kernels/solver_blas1.cu), and the
BiCGSTAB and direction updates as ``cupy.ElementwiseKernel``. Reductions
accumulate in float64, also for float32 vectors. Scalars stay on the device, so
an iteration queues its kernels without a host synchronisation (and can be
captured in a CUDA graph).

:class:`CgProduct` goes further for CG on a matrix whose SpMV is a plain row
kernel or dia: ``q = A p``, ``p.q`` and the direction update ``p = z + beta p`` in one
launch (kernels/solver_cg_product.cu), so a CG iteration is two launches.
:class:`CgLoop` goes further still on small and medium problems: whole CG iterations
in one cooperative launch (up to :data:`CG_LOOP_BATCH` a launch, convergence tested on
the device after each).
"""

from __future__ import annotations

import functools

import numpy as np

from ...device import require_cupy
from ...planning import dia, palette
from ...planning.spmv import LANE_WIDTHS
from .runtime import INDEX_TYPES, VALUE_TYPES, KernelSource, ceil_div, template
from .spmv import ROW_BLOCK

# Threads per block of the solver kernels (passed to kernels/solver_reduce.cuh as a define).
SOLVER_BLOCK = 256
SOLVER_DEFINES = (f"-DSPLA_SOLVER_BLOCK={SOLVER_BLOCK}",)
# Blocks of SOLVER_BLOCK threads one SM holds at once (2048 threads).
BLOCKS_PER_SM = 8
BLAS1_SOURCE = KernelSource(
    "solver_blas1.cu",
    [template("spla_solver_dot", t) for t in VALUE_TYPES]
    + [template("spla_cg_step", t, jacobi) for t in VALUE_TYPES for jacobi in (False, True)],
    SOLVER_DEFINES)

# CG's fused product and its one-launch loop repeat the row kernels' mapping: a thread per row (1)
# or a warp kernel's lanes. One module per mapping: a solve needs one, and NVRTC compiles every
# name of a module at once.
CG_PRODUCT_LANES = (1, *LANE_WIDTHS)
CG_PRODUCT_SOURCES = {
    lanes: KernelSource("solver_cg_product.cu",
                        [template(kernel, v, i, lanes, flag) for kernel in ("spla_cg_product", "spla_cg_loop")
                         for v in VALUE_TYPES for i in INDEX_TYPES for flag in (False, True)],
                        SOLVER_DEFINES)
    for lanes in CG_PRODUCT_LANES}
# ... and dia's mapping, a thread a row over A's diagonals, with their values or the palette's codes
CG_DIA_SOURCE = KernelSource(
    "solver_cg_product.cu",
    [template(f"spla_cg_{kernel}_dia", v, coded, flag) for kernel in ("product", "loop") for v in VALUE_TYPES
     for coded in (False, True) for flag in (False, True)],
    (*SOLVER_DEFINES, f"-DSPLA_PALETTE_VALUES={palette.VALUES}"))
# Its grid is the SpMV launcher's, capped at this many waves of resident blocks: past the cap
# rows are walked grid-stride, so the last block's pass over the per-block partials stays
# short (at most ~16 a thread) however large the matrix.
CG_PRODUCT_WAVES = 4
assert ROW_BLOCK == SOLVER_BLOCK, "the fused CG product runs the row kernels' blocks through the solver reduction"
# CG runs as CgLoop up to this many rows; larger systems replay a CUDA graph of CgProduct and
# cg_step launches. Measured on 2D Poisson (BENCHMARKS.md, CG in one launch): the loop takes
# 0.73x the graph's time an iteration at 256^2, 0.56x at 512^2, 0.88x at 1024^2, 0.96x at 2048^2.
CG_LOOP_MAX_ROWS = 2**22
# CgLoop's blocks an SM (capped by the kernel's occupancy) by rows: each grid barrier waits for the
# slowest block and takes one arrival a block, so small systems want a small grid; large ones want
# the threads. (rows up to, blocks an SM), then CG_LOOP_BLOCKS_LARGE; measured at 256^2 (2 best),
# 512^2 (4), 1024^2 (4 and 8 alike) and 2048^2 (8), so the bounds between are not fitted finer.
CG_LOOP_BLOCKS = ((2**17, 2), (2**20, 4))
CG_LOOP_BLOCKS_LARGE = 8
# Set to force a number of blocks an SM at every size (scripts/bench_precond.py sweeps it).
CG_LOOP_BLOCKS_PER_SM: int | None = None


def loop_blocks_per_sm(n: int) -> int:
    """CgLoop's blocks an SM for an n x n system (before the occupancy cap)."""
    if CG_LOOP_BLOCKS_PER_SM is not None:
        return CG_LOOP_BLOCKS_PER_SM
    return next((blocks for rows, blocks in CG_LOOP_BLOCKS if n <= rows), CG_LOOP_BLOCKS_LARGE)


# Iterations a CgLoop launch may run (it stops early once converged): the host reads the state
# once a launch, and a launch cannot be interrupted.
CG_LOOP_BATCH = 128


def _row_kernel(launcher):
    """The row-kernel launcher whose mapping the fused CG kernels repeat (they do their own
    product): the launcher itself, or the one a structured launcher keeps (dia: scalar, a thread
    per row, whose grid the dia kernels take; band and rle: warp at their lanes)."""
    return getattr(launcher, "row_kernel", launcher)


class _Rows:
    """A's rows as the fused CG kernels walk them, from a bound SpMV launcher: dia's diagonals a
    thread a row where the launcher runs dia (through its palette where it reads one: the bytes of
    the SpMV auto picked), else the row kernel's lanes over A's CSR arrays. ``head`` is the
    kernels' leading arguments, ``grid`` the row kernel's, ``lanes`` its lanes a row."""

    def __init__(self, launcher):
        row = _row_kernel(launcher)
        self.grid, self.lanes = row.grid, row.row_lanes
        self.diagonals = getattr(launcher, "diagonals", None)
        if self.diagonals is None:
            self.head = row.head  # (n_rows, indptr, indices, data)
            self.index_dtype = row.head[2].dtype
            return
        structure, coded = self.diagonals
        self.head = (row.head[0], np.int64(structure.stride), np.int32(structure.n_diagonals), structure.offsets,
                     *dia.kernel_slots(structure, coded))

    def function(self, kernel: str, dtype, flag: bool, lanes: int | None = None):
        """``spla_cg_{kernel}`` (product or loop) for this mapping, at ``lanes`` a row (CSR only)."""
        if self.diagonals is None:
            lanes = self.lanes if lanes is None else lanes
            return CG_PRODUCT_SOURCES[lanes].function(template(f"spla_cg_{kernel}", dtype, self.index_dtype, lanes,
                                                               flag))
        return CG_DIA_SOURCE.function(template(f"spla_cg_{kernel}_dia", dtype, self.diagonals[1] is not None, flag))


class DeviceKernels:
    """CuPy versions: the fused raw kernels plus ElementwiseKernels, no host sync."""

    def __init__(self, n: int, dtype):
        cupy = require_cupy()
        self.xp = cupy
        self.n = n
        self.dtype = np.dtype(dtype)
        self.sm_count = cupy.cuda.Device().attributes["MultiProcessorCount"]
        # one wave of resident blocks; a grid-stride loop covers the rest
        self.resident_blocks = BLOCKS_PER_SM * self.sm_count
        self.grid = (max(1, min(ceil_div(max(n, 1), SOLVER_BLOCK), self.resident_blocks)),)
        self.block = (SOLVER_BLOCK,)
        self.partials = cupy.empty(2 * self.grid[0], dtype=cupy.float64)
        self.counter = cupy.zeros(1, dtype=cupy.uint32)
        self._n = np.int64(n)
        self._dot = BLAS1_SOURCE.function(template("spla_solver_dot", self.dtype))
        self._cg = {j: BLAS1_SOURCE.function(template("spla_cg_step", self.dtype, j))
                    for j in (False, True)}
        self._elementwise = _elementwise_kernels()

    def state(self, size: int):
        return self.xp.zeros(size, dtype=self.xp.float64)

    def fetch(self, state):
        return state.get()

    def dot(self, a, b, out):
        self._dot(self.grid, self.block, (a, b, self._n, self.partials, self.counter, out))

    def cg_step(self, x, r, z, p, q, dinv, rho, pq, state, out):
        jacobi = dinv is not None
        z_arg = z if jacobi else r  # not touched without JACOBI; any valid pointer
        d_arg = dinv if jacobi else r
        self._cg[jacobi](self.grid, self.block, (x, r, z_arg, p, q, d_arg, self._n, rho, pq, state,
                                                 self.partials, self.counter, out))

    def cg_direction(self, p, z, rho_new, rho_old):
        self._elementwise["cg_direction"](z, rho_new, rho_old, p)

    def _fuses(self, launcher) -> bool:
        """Whether the fused CG kernels can repeat the launcher's mapping: a plain row kernel
        (or a structured one that keeps one: :func:`_row_kernel`) of this solve's n x n matrix,
        in its dtype."""
        row = _row_kernel(launcher)
        return (getattr(row, "row_lanes", None) in CG_PRODUCT_LANES and row.dtype == self.dtype
                and (row.n_rows, row.n_cols) == (self.n, self.n) and self.n > 0)

    def cg_product(self, launcher):
        """A :class:`CgProduct` over a bound SpMV launcher of the n x n matrix, or None where
        the launcher is not a plain row kernel or dia (the caller keeps SpMV + :meth:`dot`)."""
        return CgProduct(self, launcher) if self._fuses(launcher) else None

    def cg_loop(self, launcher, jacobi: bool):
        """A :class:`CgLoop` over a bound SpMV launcher of the n x n matrix, or None: where
        :meth:`cg_product` would refuse it, for n over ``CG_LOOP_MAX_ROWS``, or where this
        device cannot launch the kernel cooperatively."""
        if self.n > CG_LOOP_MAX_ROWS or not self._fuses(launcher):
            return None
        loop = CgLoop(self, launcher, jacobi)
        return loop if loop.launchable() else None

    def bicgstab_direction(self, p, r, v, rho, rho_prev, alpha, omega, first, rhotol, state):
        self._elementwise["bicgstab_direction"](r, v, rho, rho_prev, alpha, omega, np.int32(first),
                                                 np.float64(rhotol), p, state)

    def bicgstab_half(self, r, v, rho, rv, alpha, state):
        self._elementwise["bicgstab_half"](v, rho, rv, r, alpha, state)

    def bicgstab_finish(self, x, r, phat, shat, t, alpha, omega, ts, tt, state):
        self._elementwise["bicgstab_finish"](phat, shat, t, alpha, ts, tt, x, r, omega, state)


class CgProduct:
    """CG's product step in one launch (kernels/solver_cg_product.cu), over the arrays and
    row mapping of a bound scalar, warp or dia SpMV launcher (:class:`_Rows`).

    :meth:`product` is the first iteration's ``q = A p``, ``pq = p.q``; :meth:`direction_product`
    every later one's: ``p = z + beta p_old`` (``beta = rho_new / rho_old``, 0 when ``rho_old``
    is 0: the direction update's formula), then ``q = A p``, ``pq = p.q``. ``p`` must be another
    buffer than ``p_old`` and ``z``. Scalars are one-element float64 device arrays; nothing is
    allocated per call, so the launches can be captured in a CUDA graph.
    """

    def __init__(self, kernels: DeviceKernels, launcher):
        cupy = kernels.xp
        rows = self.rows = _Rows(launcher)
        self.head = rows.head
        self._first, self._next = (rows.function("product", kernels.dtype, d) for d in (False, True))
        self.grid = (min(rows.grid[0], CG_PRODUCT_WAVES * kernels.resident_blocks),)
        self.block = (SOLVER_BLOCK,)
        self.partials = cupy.empty(self.grid[0], dtype=cupy.float64)
        self.counter = kernels.counter  # one counter for every reduction of a solve: one stream

    def product(self, p, q, pq):
        # the direction's arguments are not read without DIRECTION: any valid pointers
        self._first(self.grid, self.block, (*self.head, p, p, q, q, pq, pq, self.partials, self.counter, pq))

    def direction_product(self, p_old, z, rho_new, rho_old, p, q, pq):
        self._next(self.grid, self.block, (*self.head, p_old, z, p, q, rho_new, rho_old, self.partials,
                                           self.counter, pq))


class CgLoop:
    """CG iterations in one launch (kernels/solver_cg_product.cu, spla_cg_loop): the product
    step of :class:`CgProduct`, then the step of :meth:`DeviceKernels.cg_step`, with grid-wide
    barriers between them, as often as asked. The launch is cooperative (CUDA then guarantees
    every block resident at once, or refuses the launch), on a grid of
    :func:`loop_blocks_per_sm` blocks an SM at most, with the launcher's lanes a row cut until
    the grid's threads cover the rows in one pass where they can.

    :meth:`run` does iterations ``first .. first + count - 1``, stopping early at convergence,
    and leaves the scalars in ``state`` where the launch-per-step loop leaves them. The iterates
    do not depend on how the iterations are split into launches, only on the grid.
    """

    batches_uncaptured = False  # capture=False: one iteration a launch, as the launch-per-step loop

    def __init__(self, kernels: DeviceKernels, launcher, jacobi: bool):
        cupy = self._cupy = kernels.xp
        rows = self.rows = _Rows(launcher)
        self.head = rows.head
        self.dtype = kernels.dtype
        self.jacobi = jacobi
        self.batch = CG_LOOP_BATCH
        wanted = loop_blocks_per_sm(kernels.n) * kernels.sm_count
        # the launcher's lanes a row, fewer where the grid's threads would otherwise walk the rows
        # more than once: each pass is a chain of dependent loads, and the loop waits for the last
        self.lanes = rows.lanes
        while self.lanes > 1 and kernels.n * self.lanes > wanted * SOLVER_BLOCK:
            self.lanes //= 2
        raw = rows.function("loop", kernels.dtype, jacobi, self.lanes)
        # the module's function itself: its launch takes enable_cooperative_groups (RawKernel's does not)
        self._launch = raw.kernel
        resident = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(self._launch.ptr, SOLVER_BLOCK, 0)
        blocks = min(ceil_div(kernels.n, SOLVER_BLOCK // self.lanes), min(wanted, resident * kernels.sm_count))
        self.grid = (blocks,)
        self.block = (SOLVER_BLOCK,)
        self.partials = cupy.empty(3 * max(blocks, 1), dtype=cupy.float64)
        # the grid barrier's counters and generation, a 128-byte line each (kernels/solver_reduce.cuh)
        self.sync = cupy.zeros(barrier_words(self.grid[0]), dtype=cupy.uint32)

    def launchable(self) -> bool:
        """Whether a cooperative launch of this grid goes through (tried with no iterations)."""
        if self.grid[0] < 1:
            return False
        cupy = self._cupy
        scratch = cupy.zeros(8, dtype=cupy.float64)
        vector = cupy.empty(1, dtype=self.dtype)
        try:
            self._run(1, 0, vector, vector, vector, vector, (vector, vector), vector, scratch, 0.0)
        except (cupy.cuda.driver.CUDADriverError, cupy.cuda.runtime.CUDARuntimeError, TypeError):
            return False
        return True

    def run(self, first: int, count: int, x, r, z, dinv, directions, q, state, atol: float):
        """Iterations first .. first + count - 1 (first >= 1), or fewer: the launch stops after
        the iteration where ||r|| < atol (``state[6]`` = 1) or CG broke down (``state[0]``), and
        does nothing once either is set. ``directions`` are the two p buffers (p_k in
        ``directions[k % 2]``; ``directions[1]`` holds p_1 when first is 1); z and dinv are r
        where there is no Jacobi preconditioner. ``state`` holds 8 doubles."""
        self._run(first, count, x, r, z, dinv, directions, q, state, atol)

    def _run(self, first, count, x, r, z, dinv, directions, q, state, atol):
        self._launch(self.grid, self.block,
                     (*self.head, x, r, z, dinv, directions[0], directions[1], q, state, self.partials, self.sync,
                      np.int64(first), np.int64(count), np.float64(atol)),
                     enable_cooperative_groups=True)


def barrier_words(blocks: int) -> int:
    """The size of a grid barrier's sync array (kernels/solver_reduce.cuh, grid_barrier): two
    128-byte lines, and one for each group of 32 blocks."""
    return 32 * (2 + ceil_div(blocks, 32))


@functools.cache
def _elementwise_kernels():
    """The ElementwiseKernels, built once per process (CuPy caches the binaries per device).

    Scalars arrive as one-element float64 arrays and broadcast. A kernel that
    detects breakdown writes the flag from element 0 only; every element takes
    the same decision from the same scalars, so no element races ahead.
    """
    cupy = require_cupy()
    kernels = {
        "cg_direction": cupy.ElementwiseKernel(
            "T z, float64 rho_new, float64 rho_old", "T p",
            "const double beta = rho_old != 0.0 ? rho_new / rho_old : 0.0;"
            "p = z + (T)beta * p;",
            "spla_cg_direction"),
        # SciPy's order: rho breakdown, then omega breakdown, then the update.
        # No early return: CuPy wraps the operation in a grid-stride loop.
        "bicgstab_direction": cupy.ElementwiseKernel(
            "T r, T v, float64 rho, float64 rho_prev, float64 alpha, float64 omega, int32 first, "
            "float64 rhotol", "T p, raw float64 state",
            "const bool was_broken = state[0] != 0.0;"
            "const bool rho_bad = !was_broken && fabs(rho) < rhotol;"
            "const bool omega_bad = !was_broken && !rho_bad && !first && fabs(omega) < rhotol;"
            "if (i == 0 && rho_bad) state[0] = 10.0;"
            "if (i == 0 && omega_bad) state[0] = 11.0;"
            "if (!(was_broken || rho_bad || omega_bad)) {"
            "  if (first) { p = r; }"
            "  else { const double beta = (rho / rho_prev) * (alpha / omega);"
            "         p = r + (T)beta * (p - (T)omega * v); }"
            "}",
            "spla_bicgstab_direction"),
        "bicgstab_half": cupy.ElementwiseKernel(
            "T v, float64 rho, float64 rv", "T r, raw float64 alpha, raw float64 state",
            "const bool broken = state[0] != 0.0 || rv == 0.0;"
            "const double a = broken ? 0.0 : rho / rv;"
            "if (i == 0) { alpha[0] = a; if (broken && state[0] == 0.0) state[0] = 11.0; }"
            "if (!broken) r = r - (T)a * v;",
            "spla_bicgstab_half"),
        "bicgstab_finish": cupy.ElementwiseKernel(
            "T phat, T shat, T t, float64 alpha, float64 ts, float64 tt",
            "T x, T r, raw float64 omega, raw float64 state",
            "const bool broken = state[0] != 0.0;"
            "const double w = (broken || tt == 0.0) ? 0.0 : ts / tt;"
            "if (i == 0) omega[0] = w;"
            "if (!broken) { x = x + (T)alpha * phat + (T)w * shat; r = r - (T)w * t; }",
            "spla_bicgstab_finish"),
    }
    return kernels


