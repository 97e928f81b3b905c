"""Deprecated: use :mod:`spla.io.snap`.

This alias re-exports :mod:`spla.io.snap` (earlier READMEs documented
``spla.snap``) and will be removed in a later release.
"""

from __future__ import annotations

import warnings as _warnings

from .io import snap as _module
from .io.snap import *  # noqa: F401,F403

_warnings.warn("spla.snap is deprecated; import spla.io.snap instead", DeprecationWarning, stacklevel=2)


def __getattr__(name):
    # names outside the star import (leading underscore) still resolve
    return getattr(_module, name)
