"""Where a compiled run lets CPython act on an interrupt: this module stays interpreted
(``serq/compiled.py``'s ``EXCLUDED``).

CPython acts on what is asked of a running thread only in its evaluation loop, between two
bytecode instructions: a pending signal's handler (Ctrl-C raising ``KeyboardInterrupt``, on
the main thread), an exception sent to the thread (``serq.deep`` interrupts its worker with
``PyThreadState_SetAsyncExc``), another thread's request for the GIL (the main thread, waiting
in ``join()`` for the worker, must get it to run its Ctrl-C handler at all). A run compiled
from end to end executes no bytecode, so none of these would ever happen: it would run to its
horizon with Ctrl-C ignored. The event loop therefore calls :func:`poll` every
``POLL_EVENTS`` events (``engine.Sim.loop``): entering an interpreted function runs the
evaluation loop's check of all three, and a pending exception is raised from the call.

The cost is one Python call per ``POLL_EVENTS`` events (under 0.1 % of a compiled run);
the latency, ``POLL_EVENTS`` events (a millisecond or a few on the benchmarks).
"""

#: the events between two calls of :func:`poll` by the event loop
POLL_EVENTS = 256


def poll():
    """Nothing: entering it is what runs CPython's check for interrupts (see above)."""
