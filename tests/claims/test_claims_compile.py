"""Claims and `serve only` in the compiler (extension, IR 11; docs/claims.md).

`errors.json` holds pyserq 0.1.3's answer for each fragment of `error_fragments.txt`
appended to `errors_base.sq` (written by `tools/claims/probe_errors.py`, run with pyserq
0.1.3 in its own environment): the exact error text, or null when it compiles.
"""
import json
import pathlib

import pytest

import serq

HERE = pathlib.Path(__file__).parent
BASE = (HERE / "errors_base.sq").read_text()
CASES = json.loads((HERE / "errors.json").read_text())
# Where serq keeps v0.1.2's answer on purpose: a program without claims or `serve only` is a
# v0.1.2 program, and gets pyserq 0.1.2's text (0.1.3 knows the aggregates everywhere, and
# rewrote the `serve` message). The texts are pyserq 0.1.2's for the same input.
V012 = {
    "gauge g = total(done);":
        "15:11: link error: gauge `g`: unknown function `total`\n15 | gauge g = total(done);\n"
        "   |           ^^^^^",
    "stage X : step { budget 3; cost 1; serve onl (decoding); }":
        "15:42: `serve` takes `admission`, `decode first`, `exclusive prefill` or `by (keys)`, "
        "found `onl`\n15 | stage X : step { budget 3; cost 1; serve onl (decoding); }\n"
        "   |                                          ^",
}


def compile_fragment(fragment):
    return serq.compile(source=BASE + fragment + "\n", horizon=50.0, seed=1)


@pytest.mark.parametrize("case", CASES, ids=[c["fragment"][:60] for c in CASES])
def test_compile_as_pyserq_013(case):
    want = V012.get(case["fragment"], case["error"])
    if want is None:
        compile_fragment(case["fragment"])
        return
    with pytest.raises(ValueError) as e:
        compile_fragment(case["fragment"])
    assert str(e.value) == want


def test_a_program_without_claims_stays_ir_10():
    p = serq.compile(source=BASE, horizon=50.0, seed=1)
    text = p.to_json()
    assert json.loads(text)["version"] == 10
    assert '"claims"' not in text and '"only"' not in text


def test_claims_ir_shape():
    """pyserq 0.1.3's `claims` array: name, `given` only when written, kind a unit (`AtEnd`)
    or a variant tagged with the stage's index, expr; `Agg` and the iteration variables."""
    p = compile_fragment("claim a given (p > 1) : every iteration of G[1] (demand <= served);\n"
                         "claim b : some iteration of E (arrived > tokens);\n"
                         "claim c : at end (prefix_total(done) >= count(ttft));")
    d = json.loads(p.to_json())
    assert d["version"] == 11
    assert list(d)[-1] == "claims"
    assert d["claims"] == [
        {"name": "a", "given": {"Binary": ["Gt", {"Attr": 9}, {"Num": 1.0}]},
         "kind": {"EveryIteration": 3},
         "expr": {"Binary": ["Le", {"Ctx": "Demand"}, {"Ctx": "Served"}]}},
        {"name": "b", "kind": {"SomeIteration": 0},
         "expr": {"Binary": ["Gt", {"Ctx": "Arrived"}, {"Ctx": "Ntok"}]}},
        {"name": "c", "kind": "AtEnd",
         "expr": {"Binary": ["Ge", {"Agg": ["PrefixTotal", 1]}, {"Agg": ["Count", 0]}]}},
    ]


def test_serve_only_ir():
    """`serve only (e) MODE`: MODE as without `only`; `only` written after `memory`."""
    p = compile_fragment("stage X : step { budget 3; cost 1; "
                         "serve only (decoders > 0 ? decoding : !decoding) decode first; }")
    d = json.loads(p.to_json())
    assert d["version"] == 11 and "claims" not in d
    step = d["stages"][-1]["kind"]["Step"]
    assert step["serve"] == {"By": [{"Cond": [{"Ctx": "Decoding"}, {"Num": 0.0},
                                              {"Num": 1.0}]}]}
    assert list(step)[-1] == "only"
    assert step["only"] == {"Cond": [{"Binary": ["Gt", {"Ctx": "Ndec"}, {"Num": 0.0}]},
                                     {"Ctx": "Decoding"}, {"Unary": ["Not", {"Ctx": "Decoding"}]}]}


def test_iteration_words_are_names_only_in_claims():
    """`demand`, `served`, `arrived` stay ordinary names elsewhere (v0.1.2 programs may use
    them as attributes)."""
    p = serq.compile(source="stage S : delay;\nworkload { arrive batch(1); init { set demand = 2; "
                            "set served = 1; } session { request; } }\n"
                            "server { run S (demand + served); observe t = now; }",
                     horizon=10.0)
    assert json.loads(p.to_json())["version"] == 10


@pytest.mark.parametrize("fragment", [
    "claim a given (p > 1) : every iteration of G[1] (demand <= served);\n"
    "claim b : some iteration of E (arrived > tokens);\n"
    "claim c : at end (prefix_total(done) >= count(ttft) && largest(done) > smallest(done));",
    "stage X : step { budget 3; cost 1; serve only (decoders > 0 ? decoding : !decoding); }"])
def test_ir_11_round_trip(fragment):
    p = compile_fragment(fragment)
    q = serq.Program.from_json(p.to_json())
    assert q == p and q.to_json() == p.to_json()
    assert serq.run(q).json() == serq.run(p).json()


@pytest.mark.parametrize("edit,message", [
    # IR 11 is read only when it carries an extension: else v0.1.2's refusal
    (lambda d: d.pop("claims"), "IR version 11 (this interpreter reads 10)"),
    (lambda d: d["claims"][0].update(kind={"EveryIteration": 99}),
     "claim `a`: stage 99 out of range"),
    (lambda d: d["claims"][0].update(expr={"Agg": ["Total", 7]}),
     "claim `a`: observation 7 out of range"),
    (lambda d: d["claims"][0].update(kind={"EveryIteration": 1}),
     "claim `a`: stage `F` is not a `step` stage: only a step stage has iterations"),
    (lambda d: d["claims"][0].update(expr={"Ctx": "Remaining"}),
     "claim `a`: `remaining` is read in a claim `at end`, read when the run ends, but it "
     "exists only in a step stage's serve keys or `only`"),
    (lambda d: d["blocks"][2].insert(0, {"Set": [9, {"Ctx": "Demand"}]}),
     "session: `demand` is read in a session statement, a run or a hold's cache, but it exists "
     "only in a claim over iterations, read when an iteration starts"),
])
def test_ir_11_load_checks(edit, message):
    d = json.loads(compile_fragment("claim a : at end (total(done) > 0);").to_json())
    edit(d)
    with pytest.raises(ValueError) as e:
        serq.Program.from_json(json.dumps(d))
    assert str(e.value) == message
