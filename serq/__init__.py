"""serq: the serQ serving specification language (IR version 10), in pure Python.

The public API mirrors pyserq 0.1.2, so a pyserq user can switch by changing one import.
"""
from serq.errors import CompileError, IRError, SerqError, SimulationError
from serq.ir.types import IR_VERSION, Program
from serq.lang.compiler import compile
from serq.sim import run
from serq.trace import read_trace

__version__ = "0.1.2"

__all__ = ["IR_VERSION", "Program", "compile", "run", "read_trace", "CompileError", "IRError",
           "SerqError", "SimulationError", "__version__"]
