"""Deprecated: use :mod:`spla.io.generators`.

This alias re-exports :mod:`spla.io.generators` (earlier READMEs documented
``spla.generators``) and will be removed in a later release.
"""

from __future__ import annotations

import warnings as _warnings

from .io import generators as _module
from .io.generators import *  # noqa: F401,F403

_warnings.warn("spla.generators is deprecated; import spla.io.generators instead", DeprecationWarning, stacklevel=2)


def __getattr__(name):
    # names outside the star import (leading underscore) still resolve
    return getattr(_module, name)
