"""The interpreter: ``run(program)`` executes a validated IR program and returns its report."""
from __future__ import annotations

from serq.sim.run import run

__all__ = ["run"]
