"""serq: the serQ serving specification language (IR version 10), in pure Python.

The public API mirrors pyserq 0.1.2, so a pyserq user can switch by changing one import.
"""
from serq.errors import CompileError, IRError, SerqError, SimulationError
from serq.ir.types import IR_VERSION, Program
from serq.lang.compiler import compile
from serq.report import REPORT_VERSION, Gauge, Observe, Pool, Report, Stage
from serq.claims import run
from serq.sim.rng import Rng
from serq.trace import read_trace

__version__ = "0.1.2"


__all__ = ["IR_VERSION", "REPORT_VERSION", "Program", "compile", "run", "read_trace", "Report",
           "Observe", "Gauge", "Pool", "Stage", "Rng", "CompileError", "IRError", "SerqError",
           "SimulationError", "__version__"]
