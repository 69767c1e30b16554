"""Finding a pip-installed CUDA 13 NVRTC (what PyTorch's CUDA wheels bring), without a GPU."""

import pytest

import rime
from rime import _cuda_libs


def test_cuda_status_gives_a_reason_instead_of_raising():
    ok, why = rime.cuda_status()
    assert isinstance(ok, bool) and why


def test_a_pip_installed_nvrtc_becomes_loadable():
    found = _cuda_libs.nvrtc_candidates()
    if not found:
        pytest.skip("no pip-installed NVRTC 13 (nvidia-cuda-nvrtc) on sys.path")
    loaded = _cuda_libs.preload_nvrtc()
    assert any(p.endswith("libnvrtc.so.13") for p in loaded)
    assert rime._native.nvrtc_present()
