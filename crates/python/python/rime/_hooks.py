"""What rime's native code asks of the framework a tensor comes from: PyTorch's current CUDA
stream, workspace and temporaries from PyTorch's caching allocator (so they are ordered on that
stream like any PyTorch allocation), and the CUDA libraries pip installed.

Called from Rust (crates/python/src/hooks.rs); not a public API.
"""

from . import _cuda_libs


def prepare_cuda():
    """Before the first CUDA device is opened: make a pip-installed NVRTC loadable."""
    _cuda_libs.preload_nvrtc()


def cuda_stream_getter():
    """A callable giving PyTorch's current raw stream handle (an int) for a device index."""
    import torch

    fast = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if fast is not None:
        return fast
    return lambda index: torch.cuda.current_stream(index).cuda_stream


def cuda_workspace(nbytes, index):
    """``nbytes`` bytes from PyTorch's caching allocator on ``cuda:index``."""
    import torch

    return torch.empty((nbytes,), dtype=torch.uint8, device=torch.device("cuda", index))


def empty_strided(like, dims, strides, dtype):
    """A new tensor (or array) of the framework and device of ``like`` with these dims and
    element strides; ``dtype`` is a torch dtype for torch, a numpy type string for numpy."""
    if type(like).__module__.startswith("torch"):
        import torch

        return torch.empty_strided(tuple(dims), tuple(strides), dtype=dtype, device=like.device)
    import numpy

    itemsize = numpy.dtype(dtype).itemsize
    extent = 1 + sum((d - 1) * s for d, s in zip(dims, strides))
    flat = numpy.empty((extent,), dtype=dtype)
    return numpy.lib.stride_tricks.as_strided(
        flat, shape=tuple(dims), strides=tuple(s * itemsize for s in strides)
    )
