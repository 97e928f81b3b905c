"""spla's measurement kit: one timing protocol, one correctness model, the reports.

- :mod:`spla.bench.timing`: timers (CPU wall clock, CUDA events, round-robin
  turns), byte and FLOP models, the measured copy bandwidth.
- :mod:`spla.bench.check`: the error scaled by |A| |x| and its tolerance per dtype.
- :mod:`spla.bench.spmv`: the SpMV protocol (lean cuSPARSE anchor, ALG1/ALG2,
  per-call and device time) and the ``spla spmv`` report.
- :mod:`spla.bench.report`: what the SpMV and SpMM reports share.
- :mod:`spla.bench.variants`: baseline kernels kept for comparison only.

Scripts under ``scripts/`` import this package, never the CLI.
"""

from __future__ import annotations

from .check import SPMV_TOLERANCE, SpmvCheck, passes, relative_error, scaled_error
from .timing import (
                     FIRST_CHOICE_SLACK,
                     TUNED_SLACK,
                     Timing,
                     copy_bandwidth_gbps,
                     environment,
                     geomean,
                     host_copy_bandwidth_gbps,
                     host_turns,
                     spmv_bytes,
                     spmv_flops,
                     throughput,
                     time_cpu,
                     time_gpu,
                     time_gpu_budgeted,
                     time_in_turns,
                     time_on,
                     within,
)

__all__ = ["FIRST_CHOICE_SLACK", "SPMV_TOLERANCE", "SpmvCheck", "TUNED_SLACK", "Timing", "copy_bandwidth_gbps",
           "environment", "geomean", "host_copy_bandwidth_gbps", "passes", "relative_error", "scaled_error",
           "spmv_bytes", "spmv_flops", "throughput", "host_turns", "time_cpu", "time_gpu", "time_gpu_budgeted",
           "time_in_turns", "time_on", "within"]
