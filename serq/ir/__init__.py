"""The IR, version 10: typed data (``types``), its exact JSON text (``json``), loading with
the reference's leniency and messages (``load``), and validation in the reference's order
(``validate``); ``serde`` re-creates serde_json's reader so load errors carry the
reference's exact texts and positions."""
from serq.ir.types import IR_VERSION, Program

__all__ = ["IR_VERSION", "Program"]
