"""Queues (language.md 2.5, 4.11): small programs of our own. Every expected IR fragment and
error text below was obtained by compiling the same program with the reference build
(pyserq 0.1.2) and copying its answer."""
import json

import pytest

from serq.errors import CompileError
from serq.lang.compiler import compile as sq_compile

W = ("workload { arrive poisson(1); init { set prompt = 3; set x = 1; } session { request; } }\n"
     "run { horizon 10; }\n")
P = ("queue P : prefill { pool kv { cap 10; } serve fifo; "
     "prefill (p) { hold kv (p) { run (p); } } }\n")


def ir(src):
    return json.loads(sq_compile(source=src).to_json())


def err(src):
    with pytest.raises(CompileError) as e:
        sq_compile(source=src)
    return str(e.value).split("\n")[0]


def test_gateway_route_keeps_session_names_and_prefixes_marks():
    # reference: attrs [..., "prompt", "g.m", "z"], stages ["g"]
    p = ir("queue g : gateway { pool kv { } serve fifo; route { hold kv (1) { run (prompt); } "
           "mark m; set z = 1; } }\nworkload { arrive poisson(1); init { set prompt = 3; } "
           "session { request g; observe o = g.m; } }\nrun { horizon 10; }\n")
    assert p["attrs"][9:] == ["prompt", "g.m", "z"]
    assert [s["name"] for s in p["stages"]] == ["g"]
    assert p["blocks"][2][1] == {"Set": [10, {"Ctx": "Now"}]}
    assert p["blocks"][2][3] == {"Observe": [0, {"Attr": 10}]}


def test_link_latency_is_a_folded_constant_and_a_delay_stage():
    # reference: stages ["L", "L.latency"]; the transfer first waits Num 4.0 on L.latency
    p = ir("let LAT = 2;\nqueue L : link { serve ps(1) latency LAT * 2; }\n"
           "server { hold a (1) {} lease a (1); hold b (1) { transfer on L (1) from a to b (1); } }"
           "\npool a {}\npool b{}\n" + W)
    assert [s["name"] for s in p["stages"]] == ["L", "L.latency"]
    assert p["stages"][1]["kind"] == "Delay"
    first = p["blocks"][4][0]["Run"]
    assert first["stage"] == {"base": 1, "count": 1, "index": None}
    assert first["work"] == {"Num": 4.0}


def test_arguments_are_substituted_as_trees():
    # reference: the hold's units and the run's work are both (prompt * 2) + x
    p = ir(P + "server { P.prefill(prompt * 2 + x); }\n" + W)
    tree = {"Binary": ["Add", {"Binary": ["Mul", {"Attr": 9}, {"Num": 2.0}]}, {"Attr": 10}]}
    assert p["blocks"][2][0]["Hold"]["pools"][0][1] == tree
    assert p["blocks"][3][0]["Run"]["work"] == tree


def test_from_source_index_in_an_index_position():
    # reference: `run P[src] (1)` with `from P[1]` runs on P[1.0]; `release src` is P.kv[1]
    p = ir("queue P[2] : prefill { pool kv { } serve fifo; prefill (p) { hold kv (p) { run (p); }"
           " lease kv(inf); } }\nqueue D : decode { pool kv {} serve fifo; decode (p) { run (p); }"
           " decode (p) from src { hold kv (p) { run P[src] (1); release src; } } }\n"
           "server { P[1].prefill(1); D.decode(1) from P[1]; }\n" + W)
    one = {"base": 0, "count": 2, "index": {"Num": 1.0}}
    assert p["blocks"][4][0]["Run"]["stage"] == one
    assert p["blocks"][4][1] == {"Release": one}


ERRORS = [
    ("queue P : prefill { serve fifo; serve fifo; prefill (p) { run (p); } }",
     "1:33: `serve` twice: queue `P` is one stage"),
    ("queue P : prefill { serve fifo; prefill (p) { run (p); } nic ps(1); }",
     "1:58: queue `P` declares its `nic` above its entries"),
    ("queue P : prefill { pool kv { } pool kv { } serve fifo; prefill (p) { run (p); } }",
     "1:45: duplicate pool `kv` in queue `P`"),
    ("queue L : link { }",
     "1:1: queue `L` plays `link` and has neither a `serve` nor a `transfer` entry: nothing "
     "says what a transfer over it costs"),
    ("queue L : link { serve ps(1) latency 1; transfer (n) { run (n); } }",
     "1:1: queue `L` has a `transfer` entry and a `latency`: a called link's time is its "
     "entry's; write the latency in the entry body"),
    ("queue P : prefill { serve fifo; prefill (p) { run (p); } foo (p) { run (p); } }",
     "1:58: `foo` is not an entry of any role"),
    ("queue g : gateway { route (x) { } }",
     "1:21: `g.route` takes 0 parameter(s), as the role says (`route`); it declares 1"),
    ("queue P : prefill { pool kv {} prefill (p) { run (p); } }",
     "1:50: `run (…)` in queue `P`, which has no `serve`"),
    (P + "server { P.prefill (~exp(1)); }\n" + W,
     "2:10: `P.prefill`: the argument for `p` draws a sample; a parameter is substituted, "
     "so a name used twice would draw twice"),
    (P + "server { P.prefill (1) to kv (1); }\n" + W,
     "2:10: `to` belongs to a link's `transfer`, not to `prefill`"),
    ("queue P : prefill { serve fifo; prefill (p) { run (p + self); } }\n"
     "server { P.prefill (1); }\n" + W,
     "2:10: `self` inside queue `P`, which is not a family"),
    ("queue A : prefill { serve fifo; prefill (p) { B.prefill (p); } }\nqueue B : prefill { "
     "serve fifo; prefill (p) { A.prefill (p); } }\nserver { A.prefill(1); }\n" + W,
     "2:47: `A.prefill`: the entries call each other in a cycle"),
    ("queue P : prefill { serve fifo; prefill (p) { run (p + K); } }\n"
     "server { P.prefill(1); }\nlet K = 3;\n" + W,
     "1:33: `P.prefill` reads `K`, a session attribute set outside the queue: an entry sees "
     "its parameters, the queue's pools, the context and the request's `hidden` attributes; "
     "pass `K` as a parameter or `mark` a moment for the caller to read"),
    ("queue P : prefill { serve fifo; nic ps(1); prefill (p) { run (p); } }\nqueue D : decode "
     "{ serve fifo; nic ps(1); decode (p) { run (p); } }\nD pull P share maxmin;\n"
     "D pull P share maxmin;",
     "4:1: `D` pulls from `P` already: one relation per reader"),
    ("share bottleneck;\nqueue P : prefill { serve fifo; nic ps(1); prefill (p) { run (p); } "
     "}\nqueue D : decode { serve fifo; nic ps(1); decode (p) { run (p); } }\n"
     "D pull P share maxmin;",
     "4:1: the program divides shared stages by one policy: every relation and `share` "
     "names the same"),
    ("queue P : prefill { pool kv { } serve fifo; prefill (p) { hold kv (p) { run (p); } } }\n"
     "queue D : decode { pool kv {} serve fifo; decode (p) { run (p); } decode (p) from src { "
     "hold kv (p) { release src; } } }\nserver { P.prefill(1); D.decode(1) from P; }\n" + W,
     "3:24: `from P`: no entry of `P` leases a pool, so it has nothing to take"),
    ("queue P : prefill { serve fifo; prefill (p) { set t = now; run (p); observe w = now - "
     "P.t; } }\nserver { P.prefill(1); }\n" + W,
     "1:33: `P.prefill` reads `P.t`, another queue's: an entry sees its own; the gateway reads "
     "across queues and passes what an entry needs"),
    ("queue P[2] : prefill { pool kv { cap 10; } serve fifo; nic ps(5); prefill (p) { hold kv "
     "(p) { run (p); } lease kv (inf); } }\nserver { choose j in 2 by (queue(P[j].nic)); "
     "P[j].prefill (1); }\n" + W,
     "2:39: `P[…].nic` reads the request's attribute, which is no member's: write `P.nic`"),
]


@pytest.mark.parametrize("src,msg", ERRORS)
def test_queue_errors(src, msg):
    assert err(src) == msg
