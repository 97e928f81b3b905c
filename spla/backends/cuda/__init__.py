"""The CUDA backend: the only place that declares or launches kernels.

Each module binds a plan from :mod:`spla.planning` to a device matrix and
launches it; none of them decides which kernel runs.
"""
