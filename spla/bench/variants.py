"""Benchmark-side variants: baselines kept only for comparison, outside the public registries.

A variant is bound through the same public hooks as a product kernel:

- SpMM variants are a public kernel plus schedule options of
  :func:`spla.planning.spmm.plan_spmm` (``dense=False`` keeps the dense rows on
  the sparse path; ``nnz_per_lane`` sets the fused classes' lanes), run by
  :func:`spla.backends.cuda.spmm.spmm`.
- GEMM variants are :class:`~spla.planning.gemm.GemmKernel` entries for
  instantiations the kernel files already provide, planned by
  :func:`spla.planning.gemm.plan_gemm` and bound by
  :func:`spla.backends.cuda.gemm.bind` like any registry kernel.

Scripts extend the registries with :func:`register_spmm_variant` and
:func:`register_gemm_variant`.
"""

from __future__ import annotations

from ..errors import KernelError
from ..planning import gemm as gemm_planning
from ..planning import spmm as spmm_planning
from ..planning.gemm import GemmKernel, pipelined_shared_bytes, tf32_shared_bytes

# name -> (public kernel, plan_spmm options)
SPMM_VARIANTS: dict[str, tuple[str, dict]] = {
    "adaptive-sparse": ("adaptive", {"dense": False}),   # the hybrid schedule without its dense panels
    "fused-sparse": ("fused", {"dense": False}),
    "fused16": ("fused", {"nnz_per_lane": 16}),          # about 16 nonzeros per lane: fewer lanes and shuffles
    "fused-regs": ("fused", {"sliced": False}),          # k <= 16: every class holds all k columns in each lane
    "fused-sliced": ("fused", {"sliced": True}),         # k <= 16: the 32-lane classes spread k over their lanes
}

GEMM_VARIANTS: dict[str, GemmKernel] = {k.name: gemm_planning.checked(k) for k in [
    # The bank-conflict demonstration (03_padded.cu).
    GemmKernel("padded_nopad", "gemm/03_padded.cu", "spla_gemm_padded", (0,), (32, 8), (32, 32), False,
               description="the padded step with [32][32]: 32-way bank conflicts on the A reads"),
    GemmKernel("transposed_b_nopad", "gemm/03_padded.cu", "spla_gemm_transposed_b", (32, 0), (32, 32), (32, 32),
               False, description="tiled32 with the B tile stored transposed, [32][32]: 32-way bank conflicts"),
    GemmKernel("transposed_b_padded", "gemm/03_padded.cu", "spla_gemm_transposed_b", (32, 1), (32, 32), (32, 32),
               False, description="tiled32 with the B tile stored transposed, [32][33]: conflict-free"),
    # Step 7 fed raw fp32 bits (07_tf32.cu).
    GemmKernel("tf32_trunc", "gemm/07_tf32.cu", "spla_gemm_tf32", (128, 128, 32, 64, 64, 3, False), (128, 1),
               (128, 128), True, dynamic_shared=tf32_shared_bytes(128, 128, 32, 3), precision="tf32",
               tf32_rounding="truncate",
               description="tf32 fed raw fp32 bits (truncated by the tensor cores, no cvt); LOWER PRECISION"),
]}

# Exposed for scripts sizing shared memory of their own variants.
__all__ = ["SPMM_VARIANTS", "GEMM_VARIANTS", "register_spmm_variant", "register_gemm_variant", "spmm_kernel",
           "gemm_kernel", "spmm_names", "gemm_names", "pipelined_shared_bytes", "tf32_shared_bytes"]


def register_spmm_variant(name: str, kernel: str, **options) -> None:
    """Add an SpMM variant: public ``kernel`` run with ``plan_spmm`` options."""
    if kernel not in spmm_planning.KERNELS or kernel == "auto":
        raise KernelError(f"a variant builds on a public SpMM kernel, not {kernel!r}")
    SPMM_VARIANTS[name] = (kernel, dict(options))


def register_gemm_variant(entry: GemmKernel) -> None:
    """Add a GEMM variant (its instantiation must be declared by spla.backends.cuda.gemm to run)."""
    GEMM_VARIANTS[entry.name] = gemm_planning.checked(entry)


def spmm_kernel(name: str) -> tuple[str, dict]:
    """(public kernel, plan options) for a public SpMM kernel name or a variant."""
    if name in SPMM_VARIANTS:
        kernel, options = SPMM_VARIANTS[name]
        return kernel, dict(options)
    try:
        spmm_planning.parse_spmm_kernel(name)  # a public kernel, or fused:N
    except KernelError:
        raise KernelError(f"unknown SpMM kernel {name!r}; expected one of {', '.join(spmm_names())}, "
                          "or fused:N") from None
    return name, {}


def gemm_kernel(name: str):
    """What :func:`spla.planning.gemm.plan_gemm` takes for a name: the name itself or a variant's entry."""
    if name in GEMM_VARIANTS:
        return GEMM_VARIANTS[name]
    if name in gemm_planning.KERNEL_NAMES:
        return name
    raise KernelError(f"unknown GEMM kernel {name!r}; expected one of {', '.join(gemm_names())}")


def spmm_names() -> list:
    return [*spmm_planning.KERNELS, *SPMM_VARIANTS]


def gemm_names() -> list:
    return [*gemm_planning.KERNEL_NAMES, *GEMM_VARIANTS]
