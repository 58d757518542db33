# C declarations of serq/ir/arith.py for the modules that call it compiled (`cimport`): the
# operators and functions as C calls on C doubles (issue 10), so that a compiled expression
# (serq/sim/exprs.py) applies them without a Python call or a float object. arith.py stays
# the one definition of each answer; this file only exports it. The ones that call Python's
# math functions (and catch their exceptions) keep Cython's exception check.

cimport cython

cpdef double add(double a, double b) noexcept
cpdef double sub(double a, double b) noexcept
cpdef double mul(double a, double b) noexcept
cpdef double div(double a, double b) except? -1.0
cpdef double neg(double a) noexcept
cpdef double not_(double a) noexcept
cpdef double lt(double a, double b) noexcept
cpdef double le(double a, double b) noexcept
cpdef double gt(double a, double b) noexcept
cpdef double ge(double a, double b) noexcept
cpdef double eq(double a, double b) noexcept
cpdef double ne(double a, double b) noexcept
cpdef double and_(double a, double b) noexcept
cpdef double or_(double a, double b) noexcept
cpdef double powf(double x, double y) except? -1.0
cpdef double fmin(double a, double b) noexcept
cpdef double fmax(double a, double b) noexcept
cpdef double fabs(double a) noexcept
cpdef double floor(double a) except? -1.0
cpdef double ceil(double a) except? -1.0
cpdef double sqrt(double a) except? -1.0
cpdef double exp(double a) except? -1.0
cpdef double ln(double a) except? -1.0
