"""Step plans (batch-invariance.md §4.7): the schema, the JSON Lines reader and writer, and a
small synthetic engine for tests that do not run the simulator.

A plan is what a step engine decided each iteration — which requests ran, from which
absolute position, how many tokens, prefill or decode — plus the events between iterations
(admit, preempt, prefix hit, finish, evict). It carries no times or costs the numerics need;
``time`` is kept for reading. The format (one JSON object per line) is documented in
docs/numerics.md:

    {"format": "serq-plan", "version": 1, "stage": "engine", "block": 16, ...}      header
    {"step": 0, "time": 0.0123, "slices": [["s3", 0, 512, "prefill"], ...],
     "events": [["admit", "s3", 0], ["prefix_hit", "s3", 32], ...]}                 iterations

A slice ``[request, start, tokens, kind]`` processes positions ``start .. start+tokens-1``.
An iteration's events happened before its slices were computed (a final iteration may have
events and no slices).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

FORMAT = "serq-plan"
VERSION = 1
SLICE_KINDS = ("prefill", "decode")
EVENT_KINDS = ("admit", "preempt", "prefix_hit", "finish", "evict")


class PlanError(ValueError):
    """A plan file that cannot be read; the message names the file and line."""


@dataclass(frozen=True)
class Slice:
    request: str
    start: int
    n: int
    kind: str


@dataclass(frozen=True)
class Event:
    kind: str
    request: str
    tokens: int = 0


@dataclass(frozen=True)
class StepPlan:
    step: int
    time: float
    slices: tuple = ()
    events: tuple = ()

    @property
    def n_tokens(self):
        return sum(s.n for s in self.slices)


@dataclass
class Plan:
    header: dict = field(default_factory=dict)
    steps: list = field(default_factory=list)


def step_json(step: StepPlan) -> str:
    return json.dumps({"step": step.step, "time": step.time,
                       "slices": [[s.request, s.start, s.n, s.kind] for s in step.slices],
                       "events": [[e.kind, e.request, e.tokens] for e in step.events]},
                      separators=(",", ":"))


def write_plan(path, plan: Plan):
    """Write ``plan`` to ``path`` (a new file renamed over it: ``serq.output.replace_file``)."""
    from serq.output import replace_file
    lines = [json.dumps(dict(plan.header, format=FORMAT, version=VERSION), sort_keys=True)]
    lines += [step_json(s) for s in plan.steps]
    data = ("\n".join(lines) + "\n").encode("utf-8")
    replace_file(path, lambda f: f.write(data))


def _int(v, where, what):
    if type(v) is not int or v < 0:
        raise PlanError(f"{where}: {what} must be a non-negative integer, got {v!r}")
    return v


def _parse_step(obj, where):
    if not isinstance(obj, dict) or "step" not in obj:
        raise PlanError(f"{where}: expected an iteration object with a 'step' field")
    slices, events = [], []
    for s in obj.get("slices", []):
        if not isinstance(s, list) or len(s) != 4 or not isinstance(s[0], str) or s[3] not in SLICE_KINDS:
            raise PlanError(f"{where}: a slice is [request, start, tokens, 'prefill'|'decode'], got {s!r}")
        slices.append(Slice(s[0], _int(s[1], where, "a slice's start"), _int(s[2], where, "a slice's tokens"), s[3]))
        if s[2] == 0:
            raise PlanError(f"{where}: a slice of 0 tokens for {s[0]!r}")
    for e in obj.get("events", []):
        if not isinstance(e, list) or len(e) != 3 or e[0] not in EVENT_KINDS or not isinstance(e[1], str):
            raise PlanError(f"{where}: an event is [kind, request, tokens] with kind one of "
                            f"{', '.join(EVENT_KINDS)}, got {e!r}")
        events.append(Event(e[0], e[1], _int(e[2], where, "an event's tokens")))
    t = obj.get("time", 0.0)
    if not isinstance(t, (int, float)):
        raise PlanError(f"{where}: 'time' must be a number")
    return StepPlan(_int(obj["step"], where, "'step'"), float(t), tuple(slices), tuple(events))


def read_plan(path) -> Plan:
    """Read and validate a plan file (``PlanError`` names file:line on bad input)."""
    from serq.files import open_text, os_error_text
    plan = Plan()
    try:
        f = open_text(path)  # a regular file only: /dev/zero or a FIFO would never end
    except OSError as e:
        raise PlanError(f"{path}: cannot read the plan ({os_error_text(e)})") from None
    with f:
        try:
            _read_lines(plan, f, path)
        except UnicodeDecodeError:
            raise PlanError(f"{path}: cannot read the plan (not UTF-8 text)") from None
    if not plan.header:
        raise PlanError(f"{path}: empty plan (no header)")
    return plan


def _read_lines(plan, f, path):
    """The header and the steps of an open plan file into ``plan``."""
    for no, line in enumerate(f, 1):
        where = f"{path}:{no}"
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise PlanError(f"{where}: not JSON ({e.msg})") from None
        if no == 1:
            if not isinstance(obj, dict) or obj.get("format") != FORMAT:
                raise PlanError(f"{where}: not a serq plan (the first line must be a header "
                                f"with \"format\": \"{FORMAT}\"; write one with `serq run FILE --plan PLAN.jsonl`)")
            if obj.get("version") != VERSION:
                raise PlanError(f"{where}: plan version {obj.get('version')!r}, this serq reads {VERSION}")
            plan.header = obj
            continue
        plan.steps.append(_parse_step(obj, where))


# -- a synthetic engine (tests without the simulator) ---------------------------------------
class _Toy:
    """State of the synthetic engine: KV blocks (free, some of them still holding a
    preempted request's prefix, evicted oldest first) and the requests."""

    def __init__(self, kv_blocks, block):
        self.free, self.block = kv_blocks, block
        self.cached = {}                      # rid -> blocks still cached (insertion = LRU order)
        self.events = []

    def blocks(self, n):
        return -(-n // self.block)

    def take(self, n):
        """Allocate ``n`` blocks, evicting cached prefixes (oldest first) as needed."""
        spare = self.free - sum(self.cached.values())
        for rid in list(self.cached):
            if spare >= n:
                break
            cut = min(self.cached[rid], n - spare)
            self.cached[rid] -= cut
            spare += cut
            self.events.append(Event("evict", rid, cut * self.block))
            if self.cached[rid] == 0:
                del self.cached[rid]
        if spare < n:
            return False
        self.free -= n
        return True


def synthetic_plan(n_requests=16, prompt=(8, 40), answer=48, budget=48, max_running=6,
                   chunk=None, kv_blocks=40, block=8, arrive_every=1, seed=0, order="random"):
    """A vLLM-like schedule: token budget, chunked prefill (``chunk`` cap), ``max_running``,
    a KV pool of ``kv_blocks`` blocks with recompute preemption of the newest request (LIFO),
    prefix hits on re-admission for the blocks not evicted since (full blocks, never the last
    token), arrivals every ``arrive_every`` steps, ``random`` or admission ``order`` inside a
    step. Semantics as in docs/numerics.md: a prefill runs to ``upto`` (the prompt, or after a
    preemption everything computed), each decode processes one position."""
    import numpy as np
    rng = np.random.default_rng(seed)
    reqs = {f"r{i}": dict(rid=f"r{i}", P=int(rng.integers(prompt[0], prompt[1] + 1)),
                          arrive=i * arrive_every, computed=0, decoded=0, state="new")
            for i in range(n_requests)}
    toy = _Toy(kv_blocks, block)
    running, waiting, steps, clock = [], [], [], 0
    while any(r["state"] != "done" for r in reqs.values()) and clock < 100_000:
        for r in reqs.values():
            if r["state"] == "new" and r["arrive"] <= clock:
                r["state"] = "waiting"
                waiting.append(r)
        while waiting and len(running) < max_running:
            r = waiting[0]
            upto = r["P"] + r["decoded"]
            hit = min(toy.cached.get(r["rid"], 0) * block, (upto - 1) // block * block)
            if not toy.take(toy.blocks(upto) - hit // block):
                break
            toy.cached.pop(r["rid"], None)
            toy.free -= hit // block
            waiting.pop(0)
            r.update(state="running", computed=hit, upto=upto)
            running.append(r)
            toy.events.append(Event("admit", r["rid"], 0))
            if hit:
                toy.events.append(Event("prefix_hit", r["rid"], hit))
        left, slices = budget, []
        for r in list(running):
            if left <= 0 or r not in running:
                continue
            if r["computed"] < r["upto"]:
                n = min(r["upto"] - r["computed"], left, chunk or left)
                slices.append(Slice(r["rid"], r["computed"], n, "prefill"))
                left -= n
                continue
            if r["computed"] % block == 0:
                while not toy.take(1):
                    victim = running.pop()
                    toy.free += toy.blocks(victim["computed"])
                    toy.cached[victim["rid"]] = victim["computed"] // block
                    victim["state"] = "waiting"
                    waiting.insert(0, victim)
                    toy.events.append(Event("preempt", victim["rid"], 0))
                    slices = [s for s in slices if s.request != victim["rid"]]
                    if victim is r:
                        break
                if r not in running:
                    continue
            slices.append(Slice(r["rid"], r["computed"], 1, "decode"))
            left -= 1
        for s in slices:
            r = reqs[s.request]
            r["computed"] += s.n
            r["decoded"] += s.kind == "decode"
        events, toy.events = toy.events, []
        for r in list(running):
            if r["decoded"] >= answer:
                running.remove(r)
                toy.free += toy.blocks(r["computed"])
                r["state"] = "done"
                toy.events.append(Event("finish", r["rid"], 0))
        if order == "random":
            slices = [slices[i] for i in rng.permutation(len(slices))]
        if slices or events:
            steps.append(StepPlan(len(steps), float(clock), tuple(slices), tuple(events)))
        clock += 1
    if toy.events:
        steps.append(StepPlan(len(steps), float(clock), (), tuple(toy.events)))
    return Plan({"format": FORMAT, "version": VERSION, "stage": "synthetic", "block": block}, steps)
