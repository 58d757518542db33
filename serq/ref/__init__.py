"""serq.ref: a second, deliberately naive executable definition of the IR-10 fragment
(formal.md §1.2 ``Exec``, §6.1), written from the spec and not from :mod:`serq.sim`.

``run(program) -> Report`` gives the observations exactly (rationals, converted to floats at
the end) in the report shape of ``serq.run``. Outside the fragment it raises
:class:`OutsideFragment` naming the construct. It never imports ``serq.sim``
(tests/ref/test_ref_independent.py checks this).
"""
from serq.ref.fragment import OutsideFragment
from serq.ref.report import run

__all__ = ["run", "OutsideFragment"]
