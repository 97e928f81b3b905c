"""Deprecated: use :mod:`spla.io.cache`.

This alias re-exports :mod:`spla.io.cache` (earlier READMEs documented
``spla.cache``) and will be removed in a later release.
"""

from __future__ import annotations

import warnings as _warnings

from .io import cache as _module
from .io.cache import *  # noqa: F401,F403

_warnings.warn("spla.cache is deprecated; import spla.io.cache instead", DeprecationWarning, stacklevel=2)


def __getattr__(name):
    # names outside the star import (leading underscore) still resolve
    return getattr(_module, name)
