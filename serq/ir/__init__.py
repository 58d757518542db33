"""The IR, version 10: typed data (``types``), its exact JSON text (``json``), loading with
the reference's leniency and messages (``load``), and validation in the reference's order
(``validate``)."""
from serq.ir.types import IR_VERSION, Program

__all__ = ["IR_VERSION", "Program"]
