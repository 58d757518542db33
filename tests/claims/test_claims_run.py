"""Claims at run time: results, the per-iteration variables, aggregates, the report."""
import json
import pathlib

import pytest

import serq
from serq.claims.monitor import aggregate

HERE = pathlib.Path(__file__).parent

# budget 3, chunk 2; sessions arrive at t = 1, 2, 3, …; session 0 prefills 5, the others 4;
# iterations cost 1. At t = 1: one resident wanting min(2, 5) = 2. At t = 2: 2 + 2 = 4 (the
# first has 3 left). At t = 3: 1 + 2 + 2 = 5. Served: 0, then 2, then 2 + 3, 2 + 3 + 3 ...
# The same values were read from pyserq 0.1.3 with one `some iteration` claim per value.
RENEWAL = """
stage E : step { budget 3; cost 1; chunk 2; }
workload { arrive renewal(1); init { set p = serial == 0 ? 5 : 4; } session { request; } }
server { run E prefill (p); observe ttft = now; run E decode (3); observe done = now; }
"""
PER_ITERATION = {  # time: (demand, served, arrived)
    1: (2, 0, 1), 2: (4, 2, 2), 3: (5, 5, 3), 4: (6, 8, 4), 5: (8, 11, 5), 6: (9, 14, 6),
    7: (10, 17, 7)}


def run(src, **kw):
    kw.setdefault("horizon", 12.0)
    kw.setdefault("seed", 1)
    return serq.run(serq.compile(source=src, **kw))


def test_demand_served_arrived_per_iteration():
    claims = "\n".join(
        f"claim t{t} : every iteration of E (now != {t} || (demand == {d} && served == {s} && "
        f"arrived == {a}));" for t, (d, s, a) in PER_ITERATION.items())
    rep = run(RENEWAL + claims)
    assert [c.result for c in rep.claims] == ["holds"] * len(PER_ITERATION)
    assert all(c.checked == rep.stage("E").iterations == 12 for c in rep.claims)


def test_every_some_and_counts():
    rep = run(RENEWAL + "claim a : every iteration of E (served < 10);\n"
                        "claim b : some iteration of E (demand >= 8);\n"
                        "claim c : some iteration of E (demand > 1000);")
    a, b, c = rep.claims
    assert (a.result, a.checked, a.failures, a.first) == ("fails", 12, 8, 5.0)  # served 11 at 5
    assert (b.result, b.failures, b.first) == ("witnessed", 4, 5.0)  # 2, 4, 5, 6 first
    assert (c.result, c.failures, c.first) == ("not_witnessed", 12, None)


def test_given_puts_a_claim_out_of_scope_from_the_failing_session_on():
    # session 3 starts at t = 4: the iterations at t = 1, 2, 3 were read, no more after
    rep = run(RENEWAL + "claim g given (serial < 3) : every iteration of E (0);")
    g = rep.claims[0]
    assert (g.result, g.checked, g.failures, g.first, g.note) == (
        "out_of_scope", 3, 3, 1.0, "session 3 fails `given`")


def test_at_end_not_evaluated_while_sessions_live():
    rep = run(RENEWAL + "claim e : at end (count(done) >= 0);")
    e = rep.claims[0]
    assert e.result == "not_evaluated"
    assert e.note == f"{rep.arrivals - rep.ended} sessions live at the end"


BATCH = """
stage E : step { budget 3; cost 1; }
workload { arrive batch(3); init { set p = serial == 0 ? 1 : 4; } session { request; } }
server { run E prefill (p); observe ttft = now; run E decode (3); observe done = now; }
"""


def test_aggregates_include_the_warmup():
    # ttft is observed at 1, 2, 3 (budget 3: the 1-token prompt, then the 4-token ones),
    # the warm-up (2.5) drops two from the report, not from the aggregates
    rep = run(BATCH + "claim n : at end (count(ttft) == 3 && total(ttft) == 6 && "
                      "largest(ttft) == 3 && smallest(ttft) == 1 && prefix_total(ttft) == 10);",
              horizon=50.0, warmup=2.5)
    assert rep.observe("ttft").count == 1
    assert rep.claims[0].result == "holds" and rep.claims[0].checked == 1


def test_at_end_fails_at_the_end():
    rep = run(BATCH + "claim n : at end (largest(done) < 1);", horizon=50.0)
    n = rep.claims[0]
    assert (n.result, n.checked, n.failures, n.first) == ("fails", 1, 1, 50.0)


@pytest.mark.parametrize("kind,values,want", [
    ("PrefixTotal", [3.0, 1.0, 2.0], 10.0),  # 1 + (1+2) + (1+2+3): the pinned case
    ("PrefixTotal", [], 0.0), ("Total", [3.0, 1.0, 2.0], 6.0), ("Count", [3.0, 1.0], 2.0),
    ("Largest", [3.0, 1.0, 2.0], 3.0), ("Smallest", [3.0, 1.0, 2.0], 1.0),
    ("Largest", [], 0.0), ("Smallest", [], 0.0), ("Count", [], 0.0), ("Total", [], 0.0)])
def test_aggregate(kind, values, want):
    assert aggregate(kind, values) == want


def test_report_json_and_text():
    rep = run(BATCH + "claim a : every iteration of E (tokens <= 3);\n"
                      "claim b given (p >= 10) : at end (1);", horizon=50.0)
    doc = json.loads(rep.json())
    assert list(doc)[list(doc).index("gauges") + 1] == "claims"
    assert doc["claims"][0] == {"name": "a", "kind": "every_iteration", "result": "holds",
                                "checked": 6, "failures": 0, "first": None, "note": None}
    text = rep.text()
    assert "claims (checked on this run's path only)" in text
    assert "  a      every iteration  holds (6 iterations)" in text
    assert "  b      at end           out of scope: session 0 fails `given`" in text


def test_a_report_without_claims_has_no_claims_key():
    rep = run(BATCH, horizon=50.0)
    assert rep.claims is None and '"claims"' not in rep.json()


@pytest.mark.parametrize("name", sorted(p.name[:-3] for p in (HERE / "serve_only").glob("*.sq")))
def test_serve_only_as_pyserq_013(name):
    want = json.loads((HERE / "serve_only" / f"{name}.report.json").read_text())
    got = json.loads(serq.run(serq.compile(str(HERE / "serve_only" / f"{name}.sq"))).json())
    got.pop("serq_version")
    assert got == want


def test_report_from_json_keeps_the_claims():
    rep = run(BATCH + "claim a : every iteration of E (tokens <= 2);", horizon=50.0)
    back = serq.Report.from_json(rep.json())
    assert back.claims == rep.claims and back.json() == rep.json()
