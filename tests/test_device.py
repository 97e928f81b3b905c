"""spla.device: the side rule and CuPy's out-of-memory error as spla's DeviceMemoryError."""

from __future__ import annotations

import types

import numpy as np
import pytest

import spla
from spla import DeviceMemoryError, InputError, device


class _OutOfMemory(MemoryError):
    pass


@pytest.fixture
def fake_cupy(monkeypatch):
    memory = types.SimpleNamespace(OutOfMemoryError=_OutOfMemory)
    fake = types.SimpleNamespace(cuda=types.SimpleNamespace(memory=memory), ndarray=type("ndarray", (), {}))
    monkeypatch.setattr(device, "_import_cupy", lambda: fake)
    monkeypatch.setattr(device, "free_device_memory", lambda: 1 << 30)
    return fake


def test_cupy_out_of_memory_becomes_device_memory_error(fake_cupy):
    with pytest.raises(DeviceMemoryError, match="needs 3.00 GiB on the GPU but only 1.00 GiB is free"):
        with device.device_memory_errors("SpMM"):
            raise _OutOfMemory(3 << 30, 0)


def test_host_memory_errors_pass_through(fake_cupy):
    with pytest.raises(MemoryError) as caught:
        with device.device_memory_errors():
            raise MemoryError("host")
    assert not isinstance(caught.value, DeviceMemoryError)


def test_the_front_doors_translate_a_gpu_out_of_memory(fake_cupy, monkeypatch):
    from spla.ops import spmm as ops_spmm

    def full(*args, **kwargs):
        raise _OutOfMemory(5 << 30, 0)

    monkeypatch.setattr(ops_spmm, "_spmm_gpu", full)
    monkeypatch.setattr(ops_spmm, "array_module", lambda *arrays: None)  # "the GPU side"
    A = spla.load("gen:poisson2d:8")
    with pytest.raises(DeviceMemoryError, match="SpMM needs 5.00 GiB"):
        ops_spmm.spmm(A, np.ones((A.n_cols, 2)))


def test_resolve_device(monkeypatch):
    with pytest.raises(InputError, match="auto, cpu, gpu"):
        device.resolve_device("tpu")
    monkeypatch.setattr(device, "gpu_available", lambda: False)
    assert device.resolve_device("auto") == "cpu" and device.resolve_device("cpu") == "cpu"


def test_to_host_copies_device_arrays_and_passes_host_ones_through():
    """One host-copy helper for the whole library: a CuPy array (anything with CuPy's ``get()``)
    is copied, a NumPy array returned as it is, anything else made a NumPy array."""

    class OnDevice:
        def __init__(self, values):
            self.values = values

        def get(self):
            return np.array(self.values, dtype=np.float32)

    host = np.arange(3.0)
    assert device.to_host(host) is host
    got = device.to_host(OnDevice([1, 2]))
    assert isinstance(got, np.ndarray) and got.dtype == np.float32 and got.tolist() == [1.0, 2.0]
    assert device.to_host([4, 5]).tolist() == [4, 5] and device.to_host(7.0).shape == ()
