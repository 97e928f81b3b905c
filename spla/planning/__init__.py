"""Host-only planning: every policy that decides how work is laid out.

Row statistics, the SpMV/SpMM/GEMM ``auto`` rules, lanes rules, adaptive and
segmented schedules, SpMM tables and split-K slices. Plans are immutable
objects computed once per matrix with NumPy; nothing here imports CuPy or a
backend, so ``spla info`` shows every plan on a machine without a GPU.
"""


def ceil_div(a, b):
    """``a / b`` rounded up, for integers or NumPy integer arrays (the count of blocks, tiles or
    steps of ``b`` that cover ``a``)."""
    return -(-a // b)
