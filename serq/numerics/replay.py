"""A step plan driving a DVR server (batch-invariance.md §4.6, §4.7): the plan decides which
requests share each fast step and how many tokens each gets (so the fast kernels see the
deployment's batches); the DVR server decides positions — after a rollback a request resumes
from its verified state, and the tokens it lost are recomputed in tail steps after the plan
ends (the "rollback recompute" that ``serq numerics cost`` prices).
"""
from __future__ import annotations

import time

from serq.numerics.dvr import DVRServer
from serq.numerics.kernels.base import StepInfo


def replay_dvr(plan, model, fast, verify, reference, chosen, prompts, info, window, group,
               report, progress=None, processor=None):
    server = DVRServer(model, fast, verify, window, group, reference, processor)
    selected = set(chosen)
    admitted, preempted = set(), set()
    last = time.monotonic()
    for i, st in enumerate(plan.steps):
        hits = {}
        for ev in st.events:
            rid = ev.request
            if rid not in selected:
                continue
            if ev.kind == "admit" and rid not in admitted:
                admitted.add(rid)
                server.admit(rid, prompts[rid], info[rid][1])
            elif ev.kind == "preempt":
                preempted.add(rid)
            elif ev.kind == "prefix_hit":
                hits[rid] = ev.tokens
        for rid in list(preempted):
            if rid in hits or any(s.request == rid for s in st.slices):
                server.preempt(rid, hits.get(rid, 0))
                preempted.discard(rid)
        items = []
        for s in st.slices:
            if s.request in selected:
                if s.request not in admitted:
                    admitted.add(s.request)
                    server.admit(s.request, prompts[s.request], info[s.request][1])
                items.append((s.request, s.n))
        if items:
            decodes = sum(1 for s in st.slices if s.kind == "decode")
            server.speculate(items, StepInfo(st.n_tokens, len(st.slices), decodes))
            server.verify([rid for rid, _ in items if server.due(rid)])
            report.steps += 1
        if progress and time.monotonic() - last > 2.0:
            last = time.monotonic()
            progress(f"replayed {i + 1}/{len(plan.steps)} iterations (DVR)")
    for rid in chosen:
        if rid not in admitted:
            server.admit(rid, prompts[rid], info[rid][1])
    server.finish()
    for rid in chosen:
        r, res = server.req[rid], report.requests[rid]
        ref = reference.stream(rid, prompts[rid], len(r.committed))
        res.generated = len(r.committed)
        res.committed_equal = r.committed == ref and len(r.committed) == r.target
        res.tokens_equal = res.committed_equal
    return server.summary()
