"""rime: SDPA (attention) forward and backward from PyTorch and numpy.

CUDA tensors run on rime's SM120 kernels in place, on PyTorch's current stream; CPU tensors
and numpy arrays on rime's CPU reference engine. See docs/python.md.

- ``rime.attention(q, k, v, ...)``: differentiable attention (autograd, ``torch.compile``);
  ``rime.attention_varlen`` on packed variable-length sequences.
- ``rime.sdpa`` / ``rime.sdpa_backward``: the forward and the gradients as functions;
  ``rime.sdpa_varlen`` / ``rime.sdpa_varlen_backward`` on packed variable-length sequences.
- ``rime.distributed``: context parallelism (ring attention over a ``torch.distributed``
  process group; imported on first use).
- ``rime.Graph``: the graph API of the cuDNN frontend (tensors, ``sdpa``, ``sdpa_backward``,
  ``check``, ``heuristics``, ``build_plans``, ``execute``, JSON).
- Errors: ``RimeError``; ``UnsupportedGraph`` (``.reasons``, each a :class:`Reason`),
  ``TensorError`` (``.argument``), ``GraphError``, ``EngineError``; ``rime.explain(code)``.
"""

import sys as _sys

from . import _native
from ._errors import EngineError, GraphError, RimeError, TensorError, UnsupportedGraph
from ._native import Candidate, Graph, Reason, Report, Tensor, explain
from .functional import (
    Gradients,
    plan_cache_clear,
    plan_cache_info,
    sdpa,
    sdpa_backward,
    sdpa_varlen,
    sdpa_varlen_backward,
    set_plan_cache_capacity,
)

__version__ = _native.__version__


def cuda_status():
    """``(True, "N CUDA device(s)")`` when rime can run on CUDA here, else ``(False, why)``."""
    return _native.cuda_status()


_TORCH_NAMES = ("attention", "AttentionFunction", "attention_varlen", "AttentionVarlenFunction")


def __getattr__(name):
    # The autograd layer needs torch: imported on first use, so numpy users never import it.
    if name in _TORCH_NAMES:
        from . import autograd

        return getattr(autograd, name)
    if name == "distributed":
        import importlib

        return importlib.import_module(".distributed", __name__)
    raise AttributeError(f"module 'rime' has no attribute {name!r}")


if "torch" in _sys.modules:
    # torch is already in use: register the custom ops now, before anything is compiled.
    from .autograd import (  # noqa: F401
        AttentionFunction,
        AttentionVarlenFunction,
        attention,
        attention_varlen,
    )
