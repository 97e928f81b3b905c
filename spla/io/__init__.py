"""Matrix input and output: every source ``spla.load`` accepts, and the files spla writes.

Modules:

- :mod:`spla.io.load` -- :func:`load`, :func:`load_info`, :func:`save_npz` (re-exported here);
- :mod:`spla.io.mmio` -- Matrix Market reading and writing;
- :mod:`spla.io.native` -- the Matrix Market body check in C (``mtx_check.c``), built on first use;
- :mod:`spla.io.snap` -- SNAP edge lists;
- :mod:`spla.io.cache` -- the binary load cache and spla's ``.npz`` files;
- :mod:`spla.io.catalog`, :mod:`spla.io.fetch` -- the matrix catalogue and downloads;
- :mod:`spla.io.generators` -- ``gen:`` specs.
"""

from __future__ import annotations

from .load import (
                   DEFAULT_STAND_IN,
                   FILE_KINDS,
                   GEN_PREFIX,
                   PROGRESS_MIN_BYTES,
                   file_kind,
                   load,
                   load_info,
                   matrix_stem,
                   save_npz,
)

__all__ = ["load", "load_info", "save_npz", "file_kind", "matrix_stem", "GEN_PREFIX", "FILE_KINDS",
           "DEFAULT_STAND_IN", "PROGRESS_MIN_BYTES"]
