"""New tensors and arrays for rime's outputs: dense, in the framework and on the device of the
tensor they follow, with its order of dims in memory (so a BSHD ``q`` gets a BSHD ``dq``).

The same functions allocate the real outputs and, under ``torch.compile``, the fake ones, so
both have the same strides.
"""

import sys


def is_torch(x):
    """True for a ``torch.Tensor`` (without importing torch)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def element_strides(x):
    """``x``'s strides in elements."""
    if is_torch(x):
        return tuple(x.stride())
    return tuple(s // x.itemsize for s in x.strides)


def memory_order(x):
    """The dims of ``x`` from outermost to innermost in memory (ties in index order)."""
    strides = element_strides(x)
    return sorted(range(len(strides)), key=lambda i: (-strides[i], i))


def new_like(x, shape, dtype=None):
    """A new tensor (or array) of ``shape`` with ``x``'s framework, device and (unless given)
    dtype. Of ``x``'s own shape: ``empty_like`` (``x``'s strides when ``x`` is dense, else
    dense in ``x``'s dim order for numpy and row-major for torch). Of another shape: dense in
    ``x``'s dim order in memory."""
    same = tuple(shape) == tuple(x.shape) and (dtype is None or dtype == x.dtype)
    if is_torch(x):
        import torch

        if same:
            return torch.empty_like(x)
    else:
        import numpy

        if same:
            return numpy.empty_like(x)
    order = memory_order(x)
    inverse = [order.index(i) for i in range(len(order))]
    physical = [shape[i] for i in order]
    if is_torch(x):
        return torch.empty(physical, dtype=dtype or x.dtype, device=x.device).permute(inverse)
    return numpy.empty(physical, dtype=dtype or x.dtype).transpose(inverse)


def new_packed(x, shape, dtype):
    """A new row-major tensor (or array) of ``shape`` and ``dtype`` on ``x``'s device."""
    if is_torch(x):
        import torch

        return torch.empty(shape, dtype=dtype, device=x.device)
    import numpy

    return numpy.empty(shape, dtype=dtype)


def float32(x):
    """The float32 dtype of ``x``'s framework."""
    if is_torch(x):
        import torch

        return torch.float32
    import numpy

    return numpy.float32
