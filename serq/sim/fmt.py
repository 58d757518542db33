"""Rust's ``Display`` of an f64 for run-time messages: the one implementation is
:func:`serq.ir.floats.display` (this name stays for the interpreter's imports)."""
from __future__ import annotations

from serq.ir.floats import display

__all__ = ["display"]
