"""Deprecated: use :mod:`spla.io.mmio`.

This alias re-exports :mod:`spla.io.mmio` (earlier READMEs documented
``spla.mmio``) and will be removed in a later release.
"""

from __future__ import annotations

import warnings as _warnings

from .io import mmio as _module
from .io.mmio import *  # noqa: F401,F403

_warnings.warn("spla.mmio is deprecated; import spla.io.mmio instead", DeprecationWarning, stacklevel=2)


def __getattr__(name):
    # names outside the star import (leading underscore) still resolve
    return getattr(_module, name)
