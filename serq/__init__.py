"""serq: the serQ serving specification language (IR version 10), in pure Python.

The public API mirrors pyserq 0.1.2, so a pyserq user can switch by changing one import.

The names below are loaded on first use (PEP 562): ``import serq`` itself costs nothing, so
that the command line (``serq.entry``) can take charge of Ctrl-C before the compiler, the
interpreter and numpy are imported — an interrupt during those ~0.2 s is then "interrupted"
with status 130, not a traceback. ``from serq import compile`` and ``serq.run`` work as with
eager imports.
"""
from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)

__version__ = "0.1.2"

# The simulator runs compiled (Cython) when it was built so, from source with SERQ_PURE=1 or
# when a compiled module is older than its source: serq/compiled.py chooses, at import.
from serq import compiled as _compiled  # noqa: E402  (os and sys only)

_compiled.install()

# public name -> the module that defines it
_EXPORTS = {
    "CompileError": "serq.errors",
    "IRError": "serq.errors",
    "SerqError": "serq.errors",
    "SimulationError": "serq.errors",
    "RangeError": "serq.errors",
    "IR_VERSION": "serq.ir.types",
    "Program": "serq.ir.types",
    "compile": "serq.lang.compiler",
    "REPORT_VERSION": "serq.report",
    "Report": "serq.report",
    "Observe": "serq.report",
    "Gauge": "serq.report",
    "Pool": "serq.report",
    "Stage": "serq.report",
    "run": "serq.claims",  # serq.sim.run plus the claims extension
    "Rng": "serq.sim.rng",
    "read_trace": "serq.trace",
}

__all__ = ["IR_VERSION", "REPORT_VERSION", "Program", "compile", "run", "read_trace", "Report",
           "Observe", "Gauge", "Pool", "Stage", "Rng", "CompileError", "IRError", "SerqError",
           "SimulationError", "RangeError", "__version__"]


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'serq' has no attribute {name!r}")
    import importlib
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next access is a plain attribute
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:  # for type checkers and editors: the eager imports
    from serq.errors import CompileError, IRError, RangeError, SerqError, SimulationError
    from serq.ir.types import IR_VERSION, Program
    from serq.lang.compiler import compile
    from serq.report import REPORT_VERSION, Gauge, Observe, Pool, Report, Stage
    from serq.claims import run
    from serq.sim.rng import Rng
    from serq.trace import read_trace
