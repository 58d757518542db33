"""A stand-in for the `cython` module, for running serq's typed modules without Cython.

Some modules (serq.sim.rng, ...) are typed for Cython's pure-Python mode: the same .py file
runs interpreted, or is compiled by Cython to C types (issue 10). Their annotations and
decorators name the `cython` module, which exists only where Cython is installed. Such a
module imports it as

    try:
        import cython
    except ImportError:                    # Cython not installed: run interpreted
        from serq import _cython_shim as cython

and this shim supplies, as no-ops, exactly the names those modules use: decorators that
return what they decorate, `declare`/`cast` that return the value unchanged, and type names
whose identity does not matter. Interpreted behaviour is the same as with Cython's own
`Shadow` module (which `import cython` gives when Cython is installed but the module is not
compiled). Annotations are never evaluated (the typed modules use `from __future__ import
annotations`), so the types only need names for `cython.declare`, `cython.cast` and
`@cython.locals`. Add a name here when a typed module starts to use it.
"""

compiled = False   # this module's users run interpreted


def _same(obj):
    return obj


cclass = final = cfunc = ccall = inline = _same


def locals(**types):   # noqa: A001 - the name is Cython's
    """`@cython.locals(name=type, ...)`: C types of a function's locals (no-op here)."""
    return _same


def declare(type=None, value=None, **options):   # noqa: A002 - the names are Cython's
    """`x = cython.declare(type, value)`: a typed variable; interpreted, just the value."""
    return value


def cast(type, value, typecheck=False):   # noqa: A002
    """`cython.cast(type, value)`: a C cast; interpreted, the value unchanged (the typed
    modules keep their values in range with explicit masks)."""
    return value


class _CType:
    """A C type name, such as `cython.uint`; `cython.uint[::1]` (a typed memoryview, a
    C array) is one too."""

    def __getitem__(self, dims):
        return self


bint = int = long = uint = ulonglong = longlong = double = Py_ssize_t = void = _CType()  # noqa: A001


def freelist(n):
    """`@cython.freelist(n)`: a free list of n objects for a cclass (no-op here)."""
    return _same


def trashcan(on=True):
    """`@cython.trashcan(True)`: a cclass freed without deep C recursion (no-op here)."""
    return _same


def boundscheck(flag):
    """`@cython.boundscheck(False)`: C indexing without the bounds check (no-op here; so are
    `@cython.wraparound(False)`, no negative indices, and `@cython.initializedcheck(False)`,
    no check that a memoryview is set)."""
    return _same


wraparound = initializedcheck = boundscheck


def exceptval(value=None, check=True):
    """`@cython.exceptval(value, check=True)`: the C value that signals an exception from a
    typed function (no-op here)."""
    return _same
