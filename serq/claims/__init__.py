"""Claims (extension, IR 11; formal.md §2.2, §6.5): what one run says about them.

``serq.run`` hands a program with claims to the simulator together with a
:class:`~serq.claims.monitor.ClaimMonitor`, which watches the run (sessions as they start,
every step-engine iteration, the observations) and gives one :class:`ClaimResult` per claim:
``holds``/``fails`` (every iteration), ``witnessed``/``not_witnessed`` (some iteration),
``holds``/``fails``/``not_evaluated`` (at end), or ``out_of_scope`` when a session fails the
claim's ``given``. One run checks one path: it never proves a claim (docs/claims.md).
"""
from serq.claims.monitor import ClaimMonitor
from serq.report.claims import ClaimResult
from serq.claims.run import run

__all__ = ["ClaimMonitor", "ClaimResult", "run"]
