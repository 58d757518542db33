"""One exception type per layer, all ``ValueError`` so the pyserq-compatible API holds.

``str(error)`` is exactly the reference's message; callers (the CLI) print it as it is.
"""


class SerqError(ValueError):
    """Base of every error serq reports about its input."""


class CompileError(SerqError):
    """The text of a program does not compile (lexing, parsing, linking, lint, validation)."""


class IRError(SerqError):
    """An IR text does not load, or an IR program does not validate."""


class SimulationError(SerqError):
    """A run failed: the message names the simulated time and session where it can."""


class RangeError(SerqError, OverflowError):
    """A number given to the API is out of its range (``compile(seed=-1)``,
    ``horizon=10**400``). pyserq raises a bare ``OverflowError`` there; this is a
    ``ValueError``, as serq's API promises, and an ``OverflowError`` too, so code written
    for pyserq still catches it."""
