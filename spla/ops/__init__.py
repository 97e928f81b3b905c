"""Front doors: validate once, pick the side (where x lives), ask planning for a
plan, hand it to a backend. ``spla.spmv``, ``spla.spmm``, ``spla.gemm`` and
``spla.gemv`` are these functions."""
