# A session's states and its frames' kinds as C constants for the compiled modules (cimport).
# The Python names are states.py's (never compiled); tests/sim/test_states.py holds the two
# equal. No module implements this file: it declares constants only.

cdef enum:
    READY = 0
    QUEUED = 1
    IN_STAGE = 2
    GROWING = 3
    ENDED = 4

cdef enum:
    PLAIN = 0
    LOOP = 1
    HOLD = 2
