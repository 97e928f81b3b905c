"""Deprecated alias (removed in 0.3): the SpMV kernel registry and rules live in
:mod:`spla.planning.spmv`, the launchers in :mod:`spla.backends.cuda.spmv`, and
``spla.spmv`` in :mod:`spla.ops.spmv`."""

import warnings as _warnings

from ..ops.spmv import spmv
from ..planning.spmv import KERNELS, SPLA_KERNELS, choose_kernel, describe_choice, lanes_for, parse_kernel

__all__ = ["KERNELS", "SPLA_KERNELS", "choose_kernel", "describe_choice", "lanes_for", "parse_kernel", "spmv"]

_warnings.warn("spla.backend.spmv_cuda is deprecated (removed in 0.3); use spla.planning.spmv and spla.ops.spmv",
               DeprecationWarning, stacklevel=2)
