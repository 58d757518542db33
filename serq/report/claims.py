"""One claim's result, a row of the report's `claims` section (extension, IR 11), as pyserq
0.1.3 writes it in `Report.json()`; computed by `serq.claims`."""
from __future__ import annotations

KIND_NAME = {"EveryIteration": "every_iteration", "SomeIteration": "some_iteration",
             "AtEnd": "at_end"}
RESULTS = ("holds", "fails", "witnessed", "not_witnessed", "not_evaluated", "out_of_scope")


class ClaimResult:
    """``name``; ``kind`` (``every_iteration``, ``some_iteration``, ``at_end``); ``result``
    (one of :data:`RESULTS`); ``checked`` (iterations read, or 1 for an `at end` claim that
    was read); ``failures`` (readings that were false); ``first`` (the time of the first
    failure of an `every`/`at end` claim, of the first witness of a `some` claim, else None);
    ``note`` (why a claim was not read, else None)."""

    __slots__ = ("name", "kind", "result", "checked", "failures", "first", "note")

    def __init__(self, name, kind, result, checked=0, failures=0, first=None, note=None):
        self.name = name
        self.kind = kind
        self.result = result
        self.checked = int(checked)
        self.failures = int(failures)
        self.first = None if first is None else float(first)
        self.note = note

    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__slots__}

    def __eq__(self, other):
        if not isinstance(other, ClaimResult):
            return NotImplemented
        return self.as_dict() == other.as_dict()

    __hash__ = None

    def __repr__(self):
        return "ClaimResult(" + ", ".join(f"{k}={v!r}" for k, v in self.as_dict().items()) + ")"

    def describe(self) -> str:
        """The result in words, for the text report."""
        from serq.report.text import fmt_number
        r = self.result
        n = self.checked
        its = f"{n} iteration{'s' if n != 1 else ''}"
        at_end = self.kind == "at_end"
        if r == "holds":
            return "holds" if at_end else f"holds ({its})"
        if r == "fails":
            t = f"fails at t = {fmt_number(self.first)}"
            return t if at_end else f"{t} ({self.failures} of {its})"
        if r == "witnessed":
            return f"witnessed at t = {fmt_number(self.first)} ({its} read)"
        if r == "not_witnessed":
            return f"not witnessed ({its} read)"
        return f"{r.replace('_', ' ')}: {self.note}"
