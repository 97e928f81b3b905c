"""Executors of plans: ``cpu`` (NumPy/SciPy, the reference) and ``cuda`` (spla's kernels)."""
