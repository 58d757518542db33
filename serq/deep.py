"""Deep but legal programs (an aggregate of 4096 terms nests 4096 levels) recurse deeply in
the compiler and the JSON writer; run those with a higher recursion limit, and turn a stack
that still overflows into a clear error instead of a traceback."""
from __future__ import annotations

import functools
import sys

from serq.errors import SerqError

LIMIT = 100_000


def deep(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        old = sys.getrecursionlimit()
        if old < LIMIT:
            sys.setrecursionlimit(LIMIT)
        try:
            return func(*args, **kwargs)
        except RecursionError:
            raise SerqError("the program nests too deeply for serq to process it "
                            "(expressions or blocks thousands of levels deep)") from None
        finally:
            sys.setrecursionlimit(old)
    return wrapper
