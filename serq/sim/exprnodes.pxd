# C declarations of serq/sim/exprnodes.py (issue 10): an expression's node as a C struct, its
# value a C method returning a C double, its children typed `Expr`, so that a node (and a
# compiled caller holding one) evaluates a tree with C calls. Cython checks them against
# exprnodes.py, which stays the definition. Every evaluation may raise (a failed run, erlang's
# limit, a member's index): `except? -1.0`.

cimport cython

from serq.sim.context cimport Context
from serq.sim.rng cimport Rng
from serq.sim.scheduler cimport Scheduler


cpdef double op1(int code, double x) except? -1.0
cpdef double op2(int code, double x, double y) except? -1.0


cdef class Expr:
    cpdef double ev(self, a) except? -1.0


cdef class Const(Expr):
    cdef readonly double value
    cpdef double ev(self, a) except? -1.0


cdef class Attr(Expr):
    cdef readonly Py_ssize_t slot
    cpdef double ev(self, a) except? -1.0


cdef class Now(Expr):
    cdef readonly Scheduler sim
    cpdef double ev(self, a) except? -1.0


cdef class CtxRead(Expr):
    cdef Context c


cdef class Waited(CtxRead):
    cpdef double ev(self, a) except? -1.0


cdef class Size(CtxRead):
    cpdef double ev(self, a) except? -1.0


cdef class Age(CtxRead):
    cpdef double ev(self, a) except? -1.0


cdef class Last(CtxRead):
    cpdef double ev(self, a) except? -1.0


cdef class Queued(CtxRead):
    cpdef double ev(self, a) except? -1.0


cdef class Count(CtxRead):
    cpdef double ev(self, a) except? -1.0


cdef class Ntok(CtxRead):
    cpdef double ev(self, a) except? -1.0


cdef class Ndec(CtxRead):
    cpdef double ev(self, a) except? -1.0


cdef class Npre(CtxRead):
    cpdef double ev(self, a) except? -1.0


cdef class Nres(CtxRead):
    cpdef double ev(self, a) except? -1.0


cdef class Kvb(CtxRead):
    cpdef double ev(self, a) except? -1.0


cdef class Kvp(CtxRead):
    cpdef double ev(self, a) except? -1.0


cdef class Attn(CtxRead):
    cpdef double ev(self, a) except? -1.0


cdef class Decoding(CtxRead):
    cpdef double ev(self, a) except? -1.0


cdef class Admission(CtxRead):
    cpdef double ev(self, a) except? -1.0


cdef class Remaining(CtxRead):
    cpdef double ev(self, a) except? -1.0


cdef class Demand(CtxRead):
    cpdef double ev(self, a) except? -1.0


cdef class Served(CtxRead):
    cpdef double ev(self, a) except? -1.0


cdef class Arrived(CtxRead):
    cpdef double ev(self, a) except? -1.0


# operators: `op` the interpreted node's Python function, `code` the compiled node's (op1/op2)
cdef class UnAttr(Expr):
    cdef object op
    cdef int code
    cdef Py_ssize_t slot
    cpdef double ev(self, a) except? -1.0


cdef class Unary(Expr):
    cdef object op
    cdef int code
    cdef Expr x
    cpdef double ev(self, a) except? -1.0


cdef class Binary(Expr):
    cdef object op
    cdef int code


cdef class BinKA(Binary):
    cdef double k
    cdef Py_ssize_t j
    cpdef double ev(self, a) except? -1.0


cdef class BinKF(Binary):
    cdef double k
    cdef Expr y
    cpdef double ev(self, a) except? -1.0


cdef class BinAK(Binary):
    cdef Py_ssize_t i
    cdef double k
    cpdef double ev(self, a) except? -1.0


cdef class BinAA(Binary):
    cdef Py_ssize_t i
    cdef Py_ssize_t j
    cpdef double ev(self, a) except? -1.0


cdef class BinAF(Binary):
    cdef Py_ssize_t i
    cdef Expr y
    cpdef double ev(self, a) except? -1.0


cdef class BinFK(Binary):
    cdef Expr x
    cdef double k
    cpdef double ev(self, a) except? -1.0


cdef class BinFA(Binary):
    cdef Expr x
    cdef Py_ssize_t j
    cpdef double ev(self, a) except? -1.0


cdef class BinFF(Binary):
    cdef Expr x
    cdef Expr y
    cpdef double ev(self, a) except? -1.0


cdef class SumF(Expr):
    cdef readonly tuple terms
    cpdef double ev(self, a) except? -1.0


cdef class NowAttr(Binary):
    cdef Scheduler sim
    cdef Py_ssize_t j
    cpdef double ev(self, a) except? -1.0


cdef class NowSub(Expr):
    cdef Scheduler sim
    cdef Py_ssize_t j
    cpdef double ev(self, a) except? -1.0


cdef class And(Expr):
    cdef Expr x
    cdef Expr y
    cpdef double ev(self, a) except? -1.0


cdef class Or(Expr):
    cdef Expr x
    cdef Expr y
    cpdef double ev(self, a) except? -1.0


cdef class Cond(Expr):
    cdef Expr c
    cdef Expr x
    cdef Expr y
    cpdef double ev(self, a) except? -1.0


# draws: the generator typed, constant arguments as C doubles
cdef class ExpK(Expr):
    cdef Rng r
    cdef double m
    cpdef double ev(self, a) except? -1.0


cdef class Exp(Expr):
    cdef Rng r
    cdef Expr x
    cpdef double ev(self, a) except? -1.0


cdef class UniformK(Expr):
    cdef Rng r
    cdef double lo
    cdef double hi
    cpdef double ev(self, a) except? -1.0


cdef class Uniform(Expr):
    cdef Rng r
    cdef Expr x
    cdef Expr y
    cpdef double ev(self, a) except? -1.0


cdef class BernoulliK(Expr):
    cdef Rng r
    cdef double p
    cpdef double ev(self, a) except? -1.0


cdef class Bernoulli(Expr):
    cdef Rng r
    cdef Expr x
    cpdef double ev(self, a) except? -1.0


cdef class H2K(Expr):
    cdef Rng r
    cdef double m
    cdef double c2
    cpdef double ev(self, a) except? -1.0


cdef class H2(Expr):
    cdef Rng r
    cdef Expr x
    cdef Expr y
    cpdef double ev(self, a) except? -1.0


cdef class Erlang(Expr):
    cdef Rng r
    cdef Expr x
    cdef Expr y
    cpdef double ev(self, a) except? -1.0
