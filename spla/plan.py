"""Deprecated alias of the SpMV planning modules (removed in 0.3).

Adaptive plans: :mod:`spla.planning.adaptive`; row statistics:
:mod:`spla.planning.stats`; segmented tiles: :mod:`spla.planning.segmented`.
"""

import warnings as _warnings

from .planning.adaptive import (
                                ADAPTIVE2_THRESHOLDS,
                                ADAPTIVE_STAGE,
                                ADAPTIVE_THREADS,
                                PATHS,
                                Bin,
                                DensePanel,
                                Plan,
                                Thresholds,
                                build_plan,
                                plan2_for,
                                plan_for,
)
from .planning.segmented import segmented_summary, segmented_tile_rows
from .planning.stats import RowStats, row_stats

__all__ = ["ADAPTIVE2_THRESHOLDS", "ADAPTIVE_STAGE", "ADAPTIVE_THREADS", "PATHS", "Bin", "DensePanel", "Plan",
           "RowStats", "Thresholds", "build_plan", "plan2_for", "plan_for", "row_stats", "segmented_summary",
           "segmented_tile_rows"]

_warnings.warn("spla.plan is deprecated (removed in 0.3); use spla.planning",
               DeprecationWarning, stacklevel=2)
