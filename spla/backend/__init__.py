"""Backends that execute spla's operations: ``cpu`` (NumPy/SciPy) and the CUDA ones."""
