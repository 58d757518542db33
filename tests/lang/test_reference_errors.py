"""Error texts of pyserq 0.1.2, the reference: each case a program (or compile() keyword
arguments) and the exact message the reference gives, or None where it compiles.

Provenance: recorded with pyserq 0.1.2 on 2026-12-01 by probing (variations of the
differential-testing findings under /tmp/drt/findings: positions, names, nesting).
"""
import math

import pytest

import serq

CASES = [
    ('stage e : ;\n',
     '1:11: unknown stage kind Semi\n1 | stage e : ;\n  |           ^'),
    ('stage e : fifo; stage f : (1);\n',
     '1:27: unknown stage kind LParen\n1 | stage e : fifo; stage f : (1);\n  |                           ^'),
    ('stage e : "x";\n',
     '1:11: unknown stage kind "x"\n1 | stage e : "x";\n  |           ^'),
    ('queue P : prefill { serve 3; }\n',
     '1:27: unknown stage kind 3\n1 | queue P : prefill { serve 3; }\n  |                           ^'),
    ('queue L : link { serve (1); }\n',
     '1:24: unknown stage kind LParen\n1 | queue L : link { serve (1); }\n  |                        ^'),
    ('use run;\n',
     '1:5: expected string, found `run`\n1 | use run;\n  |     ^'),
    ('use 5;\n',
     '1:5: expected string, found 5\n1 | use 5;\n  |     ^'),
    ('workload { trace batch(2); }\n',
     '1:18: expected string, found `batch`\n1 | workload { trace batch(2); }\n  |                  ^'),
    ('workload { arrive poisson(1); trace 3; }\n',
     '1:37: expected string, found 3\n1 | workload { arrive poisson(1); trace 3; }\n  |                                     ^'),
    ('stage s: fifo;\nserver { run s (1); }\nworkload { arrive poisson(1); init { set residents = 1; } session { request; } }\nrun { horizon 5; }\n',
     "link error: `residents` is a name the language supplies, read in a step stage's budget or chunk, planned before the iteration, or a step stage's cost, after the iteration, or a step stage's serve keys; a session attribute named `residents` would be read there instead\nhelp: give the session attribute a name of its own (docs/api/context.md lists the context variables)"),
    ('stage s: fifo;\nserver { run s (1); }\nworkload { arrive poisson(1); init { set decoders = 1; } session { request; } }\nrun { horizon 5; }\n',
     "link error: `decoders` is a name the language supplies, read in a step stage's budget or chunk, planned before the iteration, or a step stage's cost, after the iteration, or a step stage's serve keys; a session attribute named `decoders` would be read there instead\nhelp: give the session attribute a name of its own (docs/api/context.md lists the context variables)"),
    ('let kv_prefill = 2;\nstage s: fifo;\nserver { run s (1); }\nworkload { arrive poisson(1); session { request; } }\nrun { horizon 5; }\n',
     "link error: `kv_prefill` is a name the language supplies, read in a step stage's budget or chunk, planned before the iteration, or a step stage's cost, after the iteration, or a step stage's serve keys; a `let` constant named `kv_prefill` would be read there instead\nhelp: give the `let` constant a name of its own (docs/api/context.md lists the context variables)"),
    ('stage s: fifo;\nserver { run s (1); }\nworkload { arrive poisson(1); init { set tokens = 1; } session { request; } }\nrun { horizon 5; }\n',
     "link error: `tokens` is a name the language supplies, read in a step stage's cost, after the iteration; a session attribute named `tokens` would be read there instead\nhelp: give the session attribute a name of its own (docs/api/context.md lists the context variables)"),
    ('stage s: fifo; workload { arrive poisson(1); session { transfer (1); } }\nrun { horizon 5; }\n',
     '1:56: no stage declared above plays `transfer`: name a stage `link` or `transfer`, or write `transfer on STAGE (...)`\n1 | stage s: fifo; workload { arrive poisson(1); session { transfer (1); } }\n  |                                                        ^'),
    ('workload { arrive poisson(1); session { transfer 1 from a to b (1); } }\nrun { horizon 5; }\n',
     '1:41: no stage declared above plays `transfer`: name a stage `link` or `transfer`, or write `transfer on STAGE (...)`\n1 | workload { arrive poisson(1); session { transfer 1 from a to b (1); } }\n  |                                         ^'),
    ('workload { arrive poisson(1); session { tool (1); } }\nrun { horizon 5; }\n',
     '1:41: no stage declared above plays `tool`: name a stage `tool`, or write `tool on STAGE (...)`\n1 | workload { arrive poisson(1); session { tool (1); } }\n  |                                         ^'),
    ('let now = 2;\nstage s: fifo;\nserver { run s (1); }\nworkload { arrive poisson(1); session { request; } }\nrun { horizon 5; }\n',
     'link error: `now` is a name the language supplies, read in every expression; a `let` constant named `now` would be read there instead\nhelp: give the `let` constant a name of its own (docs/api/context.md lists the context variables)'),
    ('let inf = 2;\nstage s: fifo;\nserver { run s (1); }\nworkload { arrive poisson(1); session { request; } }\nrun { horizon 5; }\n',
     'link error: `inf` is a name the language supplies, read in every expression; a `let` constant named `inf` would be read there instead\nhelp: give the `let` constant a name of its own (docs/api/context.md lists the context variables)'),
    ('stage s: fifo;\nserver { run s (1); }\nworkload { arrive poisson(1); init { set inf = 1; } session { request; } }\nrun { horizon 5; }\n',
     'link error: `inf` is a name the language supplies, read in every expression; a session attribute named `inf` would be read there instead\nhelp: give the session attribute a name of its own (docs/api/context.md lists the context variables)'),
    ('stage s: fifo;\nserver { run s (1); set now = 3; }\nworkload { arrive poisson(1); session { request; } }\nrun { horizon 5; }\n',
     'link error: `now` is a name the language supplies, read in every expression; a session attribute named `now` would be read there instead\nhelp: give the session attribute a name of its own (docs/api/context.md lists the context variables)'),
    ('pool kv { cap 0/0; }\nstage s: fifo;\nserver { run s (1); }\nworkload { arrive poisson(1); session { request; } }\nrun { horizon 5; }\n',
     'link error: pool `kv`: cap is NaN\nhelp: a constant is a number or `inf`; `0/0` and `inf - inf` are not'),
    ('pool kv { cap 1; block 0/0; }\nstage s: fifo;\nserver { run s (1); }\nworkload { arrive poisson(1); session { request; } }\nrun { horizon 5; }\n',
     'link error: pool `kv`: block is NaN\nhelp: a constant is a number or `inf`; `0/0` and `inf - inf` are not'),
    ('pool kv { cap 0 / 0; }\nstage s : fifo;\nworkload { arrive poisson(1); session { request; } }\nserver { hold kv (1) { run s (1); } }\nrun { horizon 5; }\n',
     'link error: pool `kv`: cap is NaN\nhelp: a constant is a number or `inf`; `0/0` and `inf - inf` are not'),
    ('let z = 0; pool kv[2] { cap inf - inf; block z/z; }\nstage s: fifo;\nserver { run s (1); }\nworkload { arrive poisson(1); session { request; } }\nrun { horizon 5; }\n',
     'link error: pool `kv`: cap is NaN\nhelp: a constant is a number or `inf`; `0/0` and `inf - inf` are not'),
    ('stage s: fifo(0/0);\nserver { run s (1); }\nworkload { arrive poisson(1); session { request; } }\nrun { horizon 5; }\n',
     'link error: stage `s`: fifo server count is NaN\nhelp: a constant is a number or `inf`; `0/0` and `inf - inf` are not'),
    ('stage s: fifo;\nserver { run s (1); }\nworkload { arrive batch(0/0); session { request; } }\nrun { horizon 5; }\n',
     'link error: the batch size is NaN\nhelp: a constant is a number or `inf`; `0/0` and `inf - inf` are not'),
    ('stage s: fifo;\nserver { run s (1); }\nworkload { arrive closed(0/0); session { request; } }\nrun { horizon 5; }\n',
     'link error: the closed population is NaN\nhelp: a constant is a number or `inf`; `0/0` and `inf - inf` are not'),
    ('stage s: fifo;\nserver { run s (1); }\nworkload { arrive poisson(inf-inf); session { request; } }\nrun { horizon 0/0; }\n',
     'link error: the poisson rate is NaN\nhelp: a constant is a number or `inf`; `0/0` and `inf - inf` are not'),
    ('stage s: fifo;\nserver { run s (1); }\nworkload { arrive poisson(1); session { request; } }\nrun { arrivals 0/0; seed 0/0; warmup 0/0; horizon 0/0;  }\n',
     'link error: the horizon is NaN\nhelp: a constant is a number or `inf`; `0/0` and `inf - inf` are not'),
    ('stage s: fifo;\nserver { run s (1); }\nworkload { arrive poisson(1); session { request; } }\nrun { arrivals 0/0; seed 0/0; warmup 0/0; horizon 5;  }\n',
     'link error: the warmup is NaN\nhelp: a constant is a number or `inf`; `0/0` and `inf - inf` are not'),
    ('stage s: fifo;\nserver { run s (1); }\nworkload { arrive poisson(1); session { request; } }\nrun { arrivals 0/0; seed 0/0; horizon 5;  }\n',
     'link error: the seed is NaN\nhelp: a constant is a number or `inf`; `0/0` and `inf - inf` are not'),
    ('stage s: fifo;\nserver { run s (1); }\nworkload { arrive poisson(1); session { request; } }\nrun { arrivals 0/0; horizon 5;  }\n',
     'link error: arrivals is NaN\nhelp: a constant is a number or `inf`; `0/0` and `inf - inf` are not'),
    ('pool kv { cap 10; block 2; }\nlet x = blocksize(kv);\n',
     '2:9: link error: `blocksize` is not a constant: in a constant position (a `let`, `cap`, `block`, an array size, `horizon`, a rate) name the value with a `let` both use\n2 | let x = blocksize(kv);\n  |         ^^^^^^^^^'),
    ('pool kv { cap 10; block 2; }\nrun { horizon blocksize(kv); }\n',
     '2:15: link error: `blocksize` is not a constant: in a constant position (a `let`, `cap`, `block`, an array size, `horizon`, a rate) name the value with a `let` both use\n2 | run { horizon blocksize(kv); }\n  |               ^^^^^^^^^'),
    ('pool kv { cap 10; block 2; }\npool seats { cap blocksize(kv) * 1; }\nstage s : fifo;\nworkload { arrive poisson(1); session { request; } }\nserver { hold seats (1) { run s (1); } }\nrun { horizon 5; }\n',
     '2:18: link error: `blocksize` is not a constant: in a constant position (a `let`, `cap`, `block`, an array size, `horizon`, a rate) name the value with a `let` both use\n2 | pool seats { cap blocksize(kv) * 1; }\n  |                  ^^^^^^^^^'),
    ('let N = 2;\nstage s : fifo;\nworkload { arrive poisson(s); session { request; } }\nserver { run s (1); }\nrun { horizon 5; }\n',
     '3:27: link error: `s` is not a constant\n3 | workload { arrive poisson(s); session { request; } }\n  |                           ^\nhelp: did you mean constant `N`?\nnote: `N` declared at 1:5'),
    ('let lam = 1;\npool kv { cap last * 2; }\nstage s : fifo;\nworkload { arrive poisson(lam); session { request; } }\nserver { hold kv (1) { run s (1); } }\nrun { horizon 5; }\n',
     '2:15: link error: `last` is not a constant\n2 | pool kv { cap last * 2; }\n  |               ^^^^\nhelp: did you mean constant `lam`?\nnote: `lam` declared at 1:5'),
    ('let rate = 1;\nlet x = rat + 1;\nstage s : fifo;\nworkload { arrive poisson(rate); session { request; } }\nserver { run s (1); }\nrun { horizon 5; }\n',
     '2:9: link error: `rat` is not a constant\n2 | let x = rat + 1;\n  |         ^^^\nhelp: did you mean constant `rate`?\nnote: `rate` declared at 1:5'),
    ('let x = rate + 1;\nlet rate = 1;\nstage s : fifo;\nworkload { arrive poisson(rate); session { request; } }\nserver { run s (1); }\nrun { horizon 5; }\n',
     '1:9: link error: `rate` is not a constant\n1 | let x = rate + 1;\n  |         ^^^^\nhelp: declare this constant or use the name of an existing constant'),
    ('let horizon_t = 10;\nstage s : fifo;\nworkload { arrive poisson(1); session { request; } }\nserver { run s (1); }\nrun { horizon horizon_s; }\n',
     '5:15: link error: `horizon_s` is not a constant\n5 | run { horizon horizon_s; }\n  |               ^^^^^^^^^\nhelp: did you mean constant `horizon_t`?\nnote: `horizon_t` declared at 1:5'),
    ('let cap1 = 10;\npool kv { cap 10; block cap2; }\nstage s : fifo;\nworkload { arrive poisson(1); session { request; } }\nserver { hold kv (1) { run s (1); } }\nrun { horizon 5; }\n',
     '2:25: link error: `cap2` is not a constant\n2 | pool kv { cap 10; block cap2; }\n  |                         ^^^^\nhelp: did you mean constant `cap1`?\nnote: `cap1` declared at 1:5'),
    ('stage a : ps(1);\nshare maxmin;\nworkload { arrive batch(1); session { request; } }\nserver { run a, b (4); }\nrun { horizon 5; }\n',
     '4:17: link error: unknown stage `b`\n4 | server { run a, b (4); }\n  |                 ^\nhelp: did you mean stage `a`?\nnote: `a` declared at 1:7'),
    ('pool kv { cap 100; admit via disk; }\nstage link : step { cost 1; }\nworkload { arrive poisson(1); session { request; } }\nserver { hold kv (1) { run link prefill (1); } }\nrun { horizon 5; }\n',
     '1:30: link error: unknown stage `disk`\n1 | pool kv { cap 100; admit via disk; }\n  |                              ^^^^\nhelp: did you mean stage `link`?\nnote: `link` declared at 2:7'),
    ('pool kv { cap 1; }\nstage s: fifo;\nserver { hold kx (1) { run s (1); } }\nworkload { arrive poisson(1); session { request; } }\nrun { horizon 5; }\n',
     '3:15: link error: unknown pool `kx`\n3 | server { hold kx (1) { run s (1); } }\n  |               ^^\nhelp: did you mean pool `kv`?\nnote: `kv` declared at 1:6'),
    ('pool kv[2] { cap 1; }\nstage s: fifo;\nserver { hold kx[0] (1) { run s (1); } }\nworkload { arrive poisson(1); session { request; } }\nrun { horizon 5; }\n',
     '3:15: link error: unknown pool `kx`\n3 | server { hold kx[0] (1) { run s (1); } }\n  |               ^^\nhelp: did you mean pool `kv`?\nnote: `kv` declared at 1:6'),
    ('pool kv { cap 1; }\n  stage s: fifo;\nserver { run s (1); observe x = used(kb); }\nworkload { arrive poisson(1); session { request; } }\nrun { horizon 5; }\n',
     '3:38: link error: unknown pool `kb`\n3 | server { run s (1); observe x = used(kb); }\n  |                                      ^^\nhelp: did you mean pool `kv`?\nnote: `kv` declared at 1:6'),
    ('pool kv { cap 1; }\n   stage svc: fifo;\nserver { run s (1); observe x = queue(sv); }\nworkload { arrive poisson(1); session { request; } }\nrun { horizon 5; }\n',
     '3:14: link error: unknown stage `s`\n3 | server { run s (1); observe x = queue(sv); }\n  |              ^\nhelp: declare this stage or use the name of an existing stage'),
    ('pool kv { cap 1; }\nstage svc1: fifo;\nstage svc2: fifo;\nserver { run svc (1); }\nworkload { arrive poisson(1); session { request; } }\nrun { horizon 5; }\n',
     '4:14: link error: unknown stage `svc`\n4 | server { run svc (1); }\n  |              ^^^\nhelp: declare this stage or use the name of an existing stage'),
    ('def f(x) { run t (x); }\nstage s: fifo;\nserver { f(1); }\nworkload { arrive poisson(1); session { request; } }\nrun { horizon 5; }\n',
     '1:16: link error: unknown stage `t`\n1 | def f(x) { run t (x); }\n  |                ^\nhelp: did you mean stage `s`?\nnote: `s` declared at 2:7'),
    ('def f(x) = x + zz;\nstage s: fifo;\nserver { run s (f(1)); }\nworkload { arrive poisson(1); session { request; } }\nrun { horizon 5; }\n',
     '1:16: link error: unknown name `zz`\n1 | def f(x) = x + zz;\n  |                ^^\nhelp: declare a `let` constant or assign a session attribute before using it'),
    ('def f(x) = x + g(1);\nstage s: fifo;\nserver { run s (f(1)); }\nworkload { arrive poisson(1); session { request; } }\nrun { horizon 5; }\n',
     '1:16: link error: unknown function `g`\n1 | def f(x) = x + g(1);\n  |                ^'),
    ('def f(x) { hold kv (1) { run s (x); } }\nstage s: fifo;\nserver { f(1); }\nworkload { arrive poisson(1); session { request; } }\nrun { horizon 5; }\n',
     '1:17: link error: unknown pool `kv`\n1 | def f(x) { hold kv (1) { run s (x); } }\n  |                 ^^\nhelp: declare this pool or use the name of an existing pool'),
    ('def service() = defexp(1);\nstage s : fifo;\nworkload { arrive poisson(1); session { request; } }\nserver { run s (service()); }\nrun { horizon 5; }\n',
     '1:17: link error: unknown function `defexp`\n1 | def service() = defexp(1);\n  |                 ^^^^^^'),
    ('def visit(st, p, amount) {\n  hold p (amount) { run st (1); }\n}\npool kv { cap 10; }\nstage s : fifo;\nworkload { arrive poisson(1); session { request; } }\nserver { visit(s, kv, amount); }\nrun { horizon 5; }\n',
     '7:23: link error: unknown name `amount`\n7 | server { visit(s, kv, amount); }\n  |                       ^^^^^^\nhelp: declare a `let` constant or assign a session attribute before using it'),
    ('def g(x) = x * 2;\ndef f(x) = g(x) + qq;\nstage s : fifo;\nworkload { arrive poisson(1); session { request; } }\nserver { run s (f(1)); }\nrun { horizon 5; }\n',
     '2:19: link error: unknown name `qq`\n2 | def f(x) = g(x) + qq;\n  |                   ^^\nhelp: declare a `let` constant or assign a session attribute before using it'),
]

KW_SOURCE = 'let lam = 0.5; let k = lam * 2; def f(x) = ~exp(x);\nstage s : fifo;\nworkload { arrive poisson(lam); session { request; } }\nserver { run s (f(k)); observe t = now; }\nrun { horizon 20; }\n'

KW_CASES = [
    ({'sets': {'lam': math.nan}},
     'link error: --set lam: the value is NaN\nhelp: a constant is a number or `inf`; `0/0` and `inf - inf` are not'),
    ({'sets': {'lam': 'nan'}},
     'link error: --set lam: `nan` is not a constant\nhelp: declare this constant or use the name of an existing constant'),
    ({'sets': {'lam': 'k'}},
     'link error: --set lam: `k` is not a constant\nhelp: declare this constant or use the name of an existing constant'),
    ({'sets': {'k': 'lan'}},
     'link error: --set k: `lan` is not a constant\nhelp: did you mean constant `lam`?\nnote: `lam` declared at 1:5'),
    ({'sets': {'k': 'lam + zz'}},
     'link error: --set k: `zz` is not a constant\nhelp: declare this constant or use the name of an existing constant'),
    ({'defs': {'f': 'y'}},
     '1:37: link error: unknown name `y`\n1 | let lam = 0.5; let k = lam * 2; def f(x) = ~exp(x);\n  |                                     ^\nhelp: did you mean name `k`?\nnote: `k` declared at 1:20'),
    ({'defs': {'f': 'x + lan'}},
     '1:37: link error: unknown name `lan`\n1 | let lam = 0.5; let k = lam * 2; def f(x) = ~exp(x);\n  |                                     ^^^\nhelp: did you mean name `lam`?\nnote: `lam` declared at 1:5'),
    ({'defs': {'f': 'x + lanxxx(2)'}},
     '1:37: link error: unknown function `lanxxx`\n1 | let lam = 0.5; let k = lam * 2; def f(x) = ~exp(x);\n  |                                     ^^^^^^'),
    ({'defs': {'f': 'x + (1'}},
     'invalid expression in --def `f = x + (1`: 1:7: expected RParen, found Eof'),
    ({'sets': {'k': math.nan}},
     'link error: --set k: the value is NaN\nhelp: a constant is a number or `inf`; `0/0` and `inf - inf` are not'),
    ({'sets': {'k': '0/0'}},
     'link error: --set k: the value is NaN\nhelp: a constant is a number or `inf`; `0/0` and `inf - inf` are not'),
    ({'sets': {'lam': 'inf-inf'}},
     'link error: --set lam: the value is NaN\nhelp: a constant is a number or `inf`; `0/0` and `inf - inf` are not'),
]


def outcome(**kw):
    try:
        serq.compile(**kw)
    except ValueError as e:
        return str(e)
    return None


@pytest.mark.parametrize("source,message", CASES)
def test_reference_error_text(source, message):
    assert outcome(source=source) == message


@pytest.mark.parametrize("kwargs,message", KW_CASES)
def test_reference_keyword_error_text(kwargs, message):
    assert outcome(source=KW_SOURCE, **kwargs) == message
