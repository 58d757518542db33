"""A session's states and its frames' kinds, named once (interpreter.md §5–§6, §9).

A session is ``READY`` (in or due for the ready queue), ``QUEUED`` (waiting for a hold's
admission), ``IN_STAGE`` (its job is in a stage), ``GROWING`` (stalled on a pool it grows) or
``ENDED``; a frame of its stack runs a ``PLAIN`` block, a ``LOOP`` body or a ``HOLD`` scope.
Sessions, stages, pools, the step engine and the monitors all test these.

Written twice, on purpose, and held equal by ``tests/sim/test_states.py``: here as Python
names, and in ``states.pxd`` as a C enum that the compiled modules cimport (a comparison with a
C literal, no module look-up). This module is never compiled (``serq/compiled.py``), so its
names exist for any module running interpreted -- also beside compiled ones, whose C
constants have no Python name.
"""
READY, QUEUED, IN_STAGE, GROWING, ENDED = range(5)
PLAIN, LOOP, HOLD = range(3)
