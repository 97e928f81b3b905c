"""Deprecated: use :mod:`spla.io.fetch`.

This alias re-exports :mod:`spla.io.fetch` (earlier READMEs documented
``spla.fetch``) and will be removed in a later release.
"""

from __future__ import annotations

import warnings as _warnings

from .io import fetch as _module
from .io.fetch import *  # noqa: F401,F403

_warnings.warn("spla.fetch is deprecated; import spla.io.fetch instead", DeprecationWarning, stacklevel=2)


def __getattr__(name):
    # names outside the star import (leading underscore) still resolve
    return getattr(_module, name)
