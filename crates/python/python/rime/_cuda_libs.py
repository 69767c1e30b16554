"""Finding the CUDA 13 NVRTC that pip installs (``nvidia-cuda-nvrtc``, a PyTorch dependency).

rime's engines open NVRTC by its library name at run time; a pip-installed NVRTC lives in
``site-packages/nvidia/cu13/lib`` (or ``nvidia/cuda_nvrtc/lib``), which the dynamic loader does
not search. Loading it (and its builtins library, which NVRTC opens by name) once, globally,
before the first CUDA plan makes the name resolve to it. A system NVRTC on the loader's path
is found as before; ``RIME_NVRTC_PRELOAD=0`` turns this off.
"""

import ctypes
import glob
import os
import sys

_SUBDIRS = ("nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib")
_loaded = []


def nvrtc_candidates():
    """The pip-installed NVRTC 13 libraries on ``sys.path``: (builtins, nvrtc) pairs."""
    found = []
    for root in sys.path:
        for sub in _SUBDIRS:
            lib = os.path.join(root, sub)
            nvrtc = os.path.join(lib, "libnvrtc.so.13")
            if os.path.isfile(nvrtc):
                builtins = sorted(glob.glob(os.path.join(lib, "libnvrtc-builtins.so.13*")))
                found.append((builtins[-1] if builtins else None, nvrtc))
    return found


def preload_nvrtc():
    """Loads the first pip-installed NVRTC 13 globally; returns the paths loaded (empty when
    none was found or ``RIME_NVRTC_PRELOAD=0``)."""
    if _loaded or os.environ.get("RIME_NVRTC_PRELOAD", "1") == "0":
        return list(_loaded)
    for builtins, nvrtc in nvrtc_candidates():
        try:
            if builtins:
                ctypes.CDLL(builtins, mode=ctypes.RTLD_GLOBAL)
                _loaded.append(builtins)
            ctypes.CDLL(nvrtc, mode=ctypes.RTLD_GLOBAL)
            _loaded.append(nvrtc)
            break
        except OSError:
            continue
    return list(_loaded)
