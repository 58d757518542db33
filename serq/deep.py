"""Deep nesting, in one place: work that recurses as deep as the program nests (the parser,
lowering, linking and folding, validation, the JSON writer and reader, repr, the
interpreter's translation of expressions) runs on a thread whose stack is sized for the
recursion limit it runs under, and a nesting deeper than that limit is one clear error,
``the program nests too deeply ...``, never a crash.

Why a thread: legal programs nest thousands of levels (an aggregate of 4096 terms lowers to
4096 nested additions; pyserq 0.1.2 compiles 5000 nested conditionals), and each level costs
several Python frames, so the work needs a recursion limit far above Python's default 1000.
But a frame that passes through C (``repr``, ``json``, a generator, a dataclass ``__eq__``)
also takes C stack, about 0.4–0.7 KB measured on CPython 3.11; with the limit raised to
100,000 on the main thread's 8 MB stack, 25,000 nested `branch`es overflowed the C stack and
the process died with signal 11 before Python could raise ``RecursionError``. Here the stack
holds ``FRAME_BUDGET`` bytes for every frame the limit allows — about eight times the worst
measured — so the limit is always met first and turns into the error.

A call made while already on the deep stack (``compile`` calling ``validate`` calling
``to_json``) runs directly. When the system refuses a thread with such a stack (a tight
address-space limit), smaller stacks are tried with proportionally lower limits, and at the
last the work runs on the caller's thread under Python's own limit: deep programs are then
refused with the same error, sooner, but never crash. A Ctrl-C while the caller waits is
passed on to the worker (``KeyboardInterrupt`` raised there), so an interrupted run stops.
"""
from __future__ import annotations

import functools
import sys
import threading

from serq.errors import SerqError

__all__ = ["deep", "NestingError", "LIMIT", "STACK_BYTES", "FRAME_BUDGET", "TOO_DEEP"]

LIMIT = 100_000                 # the recursion limit on the deep stack
FRAME_BUDGET = 5 << 10          # bytes of stack per frame the limit allows
STACK_BYTES = LIMIT * FRAME_BUDGET  # 500 MiB of address space, touched only as used
_FALLBACK_STACKS = (STACK_BYTES, STACK_BYTES // 4, STACK_BYTES // 16)

TOO_DEEP = ("the program nests too deeply for serq to process it "
            "(expressions or blocks thousands of levels deep)")


class NestingError(SerqError):
    """The nesting is deeper than serq can process (a ``ValueError``)."""


_state = threading.local()      # .limit: the recursion limit of this deep thread
_limit_lock = threading.Lock()
_raised = 0                     # deep calls running now (the limit is process-wide)
_saved_limit = None


def deep(func):
    """Decorate work that recurses as deep as its input nests (see the module docstring)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if getattr(_state, "limit", None) is not None:  # already on a deep stack
            return func(*args, **kwargs)
        return _run_deep(func, args, kwargs)
    return wrapper


def _run_deep(func, args, kwargs):
    outcome = {}

    def work(limit):
        _state.limit = limit
        _raise_limit(limit)
        try:
            outcome["value"] = func(*args, **kwargs)
        except RecursionError:
            outcome["error"] = NestingError(TOO_DEEP)
        except BaseException as e:  # handed to the caller's thread
            outcome["error"] = e
        finally:
            _lower_limit()
            _state.limit = None

    thread = _start(work)
    if thread is None:  # no thread with a bigger stack: here, under Python's own limit
        work(sys.getrecursionlimit())
    else:
        _wait(thread)
    if "error" in outcome:
        error = outcome.pop("error")
        try:
            raise error
        finally:
            del error
    return outcome["value"]


def _stack_sizes():
    """The stack sizes to try, largest first: at most a quarter of the address space a
    limit (``ulimit -v``) leaves, so that the frames and data of a deep program still fit
    beside the stack and the recursion limit, not the memory, is met first."""
    sizes = _FALLBACK_STACKS
    try:
        import resource
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, OSError, ValueError):
        return sizes
    if soft == resource.RLIM_INFINITY or soft <= 0:
        return sizes
    cap = soft // 4
    return tuple(s for s in sizes if s <= cap) or (cap,)


def _start(work):
    """A started thread running ``work(limit)`` on the largest stack the system grants."""
    for size in _stack_sizes():
        with _limit_lock:
            old = threading.stack_size()
            try:
                threading.stack_size(size)
                thread = threading.Thread(target=work, args=(size // FRAME_BUDGET,),
                                          name="serq-deep", daemon=True)
                thread.start()
                return thread
            except (RuntimeError, ValueError, MemoryError):
                continue
            finally:
                threading.stack_size(old)
    return None


INTERRUPT_GRACE = 2.0           # seconds a Ctrl-C'd worker gets to end before we stop waiting


def _wait(thread) -> None:
    """Join the worker; a Ctrl-C here is raised in the worker too, which then ends.

    An exception sent to another thread lands only where that thread next runs bytecode, and
    it may land where it cannot stop the work (a worker just starting, a handler on its way
    out), so it is sent again until the worker ends; after ``INTERRUPT_GRACE`` seconds the
    caller stops waiting for it (a daemon thread, it ends with the process) — a Ctrl-C always
    ends the command."""
    try:
        thread.join()
    except KeyboardInterrupt:
        for _ in range(int(INTERRUPT_GRACE / 0.05)):
            _interrupt(thread)
            thread.join(0.05)
            if not thread.is_alive():
                break
        raise


def _interrupt(thread) -> None:
    import ctypes
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident),
                                               ctypes.py_object(KeyboardInterrupt))


def _raise_limit(limit: int) -> None:
    global _raised, _saved_limit
    with _limit_lock:
        if _raised == 0:
            _saved_limit = sys.getrecursionlimit()
        _raised += 1
        if sys.getrecursionlimit() < limit:
            sys.setrecursionlimit(limit)


def _lower_limit() -> None:
    global _raised
    with _limit_lock:
        _raised -= 1
        if _raised == 0 and _saved_limit is not None:
            sys.setrecursionlimit(_saved_limit)
