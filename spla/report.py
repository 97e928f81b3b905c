"""Deprecated alias (removed in 0.3): the SpMV report lives in :mod:`spla.bench.spmv`,
what reports share in :mod:`spla.bench.report`."""

import warnings as _warnings

from .bench.report import cpu_kernel_names, kernel_names, measure_kernels, table_lines, to_json
from .bench.spmv import format_report, spmv_report

__all__ = ["cpu_kernel_names", "format_report", "kernel_names", "measure_kernels", "spmv_report", "table_lines",
           "to_json"]

_warnings.warn("spla.report is deprecated (removed in 0.3); use spla.bench.report and spla.bench.spmv",
               DeprecationWarning, stacklevel=2)
