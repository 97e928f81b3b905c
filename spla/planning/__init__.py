"""Host-only planning: every policy that decides how work is laid out; imports no backend and no CuPy."""
