"""The exceptions rime raises. Every failure is one of these, never a crash.

``RimeError`` is the base. ``UnsupportedGraph`` carries the analyzer's reasons, each a
:class:`rime.Reason` with a stable code (``rime.explain(code)`` says what it checks, why, and how
to fix it). ``TensorError`` names the argument (or graph tensor) that is wrong.
"""


class RimeError(Exception):
    """Base class of every rime error."""


class UnsupportedGraph(RimeError):
    """No engine configuration runs the graph on this device: ``reasons`` says why, each a
    :class:`rime.Reason` (``code``, ``subject``, ``message``, ``limit``, ``hint``, ``config``)."""

    def __init__(self, message, reasons):
        super().__init__(message)
        self.reasons = list(reasons)

    @property
    def codes(self):
        """The reason codes, in order, each once."""
        seen = []
        for r in self.reasons:
            if r.code not in seen:
                seen.append(r.code)
        return seen


class TensorError(RimeError, ValueError):
    """A tensor or array rime cannot use as given; ``argument`` names it (the Python argument
    of a function, or the graph tensor of ``Graph.execute``)."""

    def __init__(self, argument, message):
        super().__init__(f"{argument}: {message}")
        self.argument = argument
        self.detail = message


class GraphError(RimeError, ValueError):
    """A graph that is malformed (``Graph.validate``) or a JSON file that does not load;
    ``errors`` lists every problem found."""

    def __init__(self, message, errors):
        super().__init__(message)
        self.errors = list(errors)


class EngineError(RimeError, RuntimeError):
    """An engine failed while building or running a plan (CUDA unavailable, driver error,
    kernel compilation, out of memory, ...)."""
