"""Deprecated: use :mod:`spla.io.catalog`.

This alias re-exports :mod:`spla.io.catalog` (earlier READMEs documented
``spla.catalog``) and will be removed in a later release.
"""

from __future__ import annotations

import warnings as _warnings

from .io import catalog as _module
from .io.catalog import *  # noqa: F401,F403

_warnings.warn("spla.catalog is deprecated; import spla.io.catalog instead", DeprecationWarning, stacklevel=2)


def __getattr__(name):
    # names outside the star import (leading underscore) still resolve
    return getattr(_module, name)
