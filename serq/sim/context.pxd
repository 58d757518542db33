# C declarations of serq/sim/context.py (issue 10): the context variables as C doubles, set by
# typed code as C stores. Every field is `public`: the expressions' nodes (exprnodes.CTX) and the
# interpreted observers read and write them as attributes. Cimports nothing of serq (state.pxd
# cimports it).

cimport cython


@cython.final
cdef class Context:
    cdef public double waited
    cdef public double size
    cdef public double age
    cdef public double last
    cdef public double queued
    cdef public double n
    cdef public double ntok
    cdef public double ndec
    cdef public double npre
    cdef public double nres
    cdef public double kvb
    cdef public double kvp
    cdef public double attn
    cdef public double decoding
    cdef public double admission
    cdef public double remaining
    cdef public double demand
    cdef public double served
    cdef public double arrived
