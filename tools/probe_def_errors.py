"""Record pyserq 0.1.2's error texts for errors met inside `def` expansions: programs whose
faulty construct sits in a def body reached through 0–3 levels of other defs (expression and
statement defs, mixed), and faulty uses written inside an outer def's body — the errors that
carry both `help:` lines and `note: in `f`, used at L:C` lines, and their neighbours.

Run with an interpreter that has the reference, pyserq 0.1.2 (never a dependency of serq):

    /tmp/refvenv/bin/python tools/probe_def_errors.py > tests/lang/data/def_expansion_errors.json

It writes a JSON object {"provenance": ..., "cases": [{"name", "source", "error"}]} where
"error" is `str(exception)` of `pyserq.compile(source=...)`, or null when it compiles.
tests/lang/test_def_expansion_errors.py checks serq against every case.
"""
import datetime
import json
import sys

HEAD = "stage svc : fifo;\nstage link : ps(1);\npool kv { cap 1000; }\n"
TAIL = "run { horizon 100; }\n"


def program(defs, server, init="", pre=""):
    return (HEAD + pre + "\n".join(defs) +
            f"\nworkload {{ arrive poisson(0.3); {init}session {{ request; }} }}\n"
            f"server {{ {server} }}\n" + TAIL)


def stmt_chain(levels, inner):
    """def s0(x) { INNER } and s1..sN each calling the one before: (defs, outermost name)."""
    defs = [f"def s0(x) {{ {inner} }}"]
    defs += [f"def s{k}(y) {{ s{k - 1}(y); }}" for k in range(1, levels + 1)]
    return defs, f"s{levels}"


def expr_chain(levels, inner):
    defs = [f"def e0(x) = {inner};"]
    defs += [f"def e{k}(y) = e{k - 1}(y);" for k in range(1, levels + 1)]
    return defs, f"e{levels}"


STMT_FAULTS = {  # a statement def body with a fault; called as TOP(1);
    "tool_on_near": "tool on sv (x);",
    "tool_on_none": "tool on zzzz (x);",
    "transfer_no_from": "transfer x;",
    "transfer_no_stage": "transfer (x);",
    "bind_clash": "hold kv (x) at admission (q = 3) { run svc (q); }",
    "bind_stray": "hold kv (x) at admission (b = 3) { run svc (b); } observe o = b;",
    "bind_now": "hold kv (x) at admission (b = now) { run svc (b); }",
    "bind_cached": "hold kv (x) at admission (b = cached) { run svc (b); }",
    "bind_queue": "hold kv (x) at admission (b = queue(svc)) { run svc (b); }",
    "dotted_unknown": "observe o = x + zz.yy;",
    "stage_unknown": "run svcc (x);",
    "pool_unknown": "hold kvv (x) { run svc (1); }",
    "dist_unknown": "run svc (~expo(x));",
    "func_unknown": "observe o = sqr(x);",
    "cached_no_cache": "hold kv (x) { observe o = cached; }",
    "syntax": "run svc (x) tool on svx;",
}


def cases():
    out = {}
    for lv in range(0, 4):
        for name, body in STMT_FAULTS.items():
            d, top = stmt_chain(lv, body)
            init = "init { set q = 1; } " if name == "bind_clash" else ""
            out[f"{name}_L{lv}"] = program(d, f"{top}(1);", init=init)
        # a drawing argument passed through the defs and read twice (or thrice) at the bottom
        d, top = expr_chain(lv, "x + x")
        out[f"draw_twice_L{lv}"] = program(d, f"run svc ({top}(~exp(1)));")
        d, top = expr_chain(lv, "x * x + x")
        out[f"draw_thrice_L{lv}"] = program(d, f"observe o = {top}(~uniform(0, 1));")
        d, top = stmt_chain(lv, "run svc (x); observe o = x;")
        out[f"draw_twice_stmt_L{lv}"] = program(d, f"{top}(~exp(1));")
        d, top = expr_chain(lv, "x * 2")
        out[f"draw_once_ok_L{lv}"] = program(d, f"observe o = {top}(~exp(1));")
        d1, top1 = expr_chain(lv, "x + x")
        out[f"mixed_draw_L{lv}"] = program(d1 + [f"def t0(z) {{ run svc ({top1}(z)); }}"],
                                           "t0(~exp(1));")
        out[f"mixed_draw2_L{lv}"] = program(
            d1 + [f"def t0(z) {{ observe o = {top1}(z); }}", "def t1(w) { t0(w); }"],
            "t1(~exp(2));")
        # arguments a statement def may not take, at the outermost use
        d, top = stmt_chain(lv, "run svc (1); observe o = x;")
        out[f"arg_now_L{lv}"] = program(d, f"{top}(now);")
        out[f"arg_queue_L{lv}"] = program(d, f"{top}(queue(svc));")
        out[f"arg_serial_L{lv}"] = program(d, f"{top}(serial + 1);")
        # ... and at a use written inside an outer def's body
        out[f"inner_now_L{lv}"] = program(d + [f"def o1(z) {{ {top}(now); }}"], "o1(1);")
        out[f"inner_queue_L{lv}"] = program(d + [f"def o1(z) {{ {top}(queue(svc)); }}"], "o1(1);")
        out[f"inner_now_o2_L{lv}"] = program(
            d + [f"def o1(z) {{ {top}(now); }}", "def o2(w) { o1(w); }"], "o2(1);")
        d, top = expr_chain(lv, "x + x")
        out[f"inner_draw_L{lv}"] = program(d + [f"def o1(z) = {top}(~exp(1));"],
                                           "observe o = o1(1);")
        out[f"inner_draw_o2_L{lv}"] = program(
            d + [f"def o1(z) = {top}(~exp(1));", "def o2(w) { observe o = o1(w); }"], "o2(1);")
        # an argument reading what the body — or a def it uses — assigns
        d, top = stmt_chain(lv, "set q = 1; observe o = x;")
        out[f"capture_L{lv}"] = program(d, f"set q = 0; {top}(q + 1);")
        out[f"capture_ref_L{lv}"] = program(d, f"set q = 0; {top}(q);")
        out[f"inner_capture_L{lv}"] = program(d + [f"def o1(z) {{ set q = 0; {top}(q + 1); }}"],
                                              "o1(1);")
        d, top = stmt_chain(lv, "hold kv (1) { observe o = x; }")
        out[f"trans_cached_L{lv}"] = program(d, f"{top}(cached + 1);")
        d, top = stmt_chain(lv, "choose q = 1 { } observe o = x;")
        out[f"trans_choose_L{lv}"] = program(d, f"set q = 0; {top}(q);")
        d, top = stmt_chain(lv, "hold kv (1) at admission (b = 2) { observe o = x; }")
        out[f"trans_binding_L{lv}"] = program(d, f"set b = 0; {top}(b + 1);")
        # names in an expression def body
        d, top = expr_chain(lv, "x + prompx")
        out[f"unknown_near_L{lv}"] = program(d, f"set prompt = 1; observe o = {top}(1);")
        d, top = expr_chain(lv, "x + zzzq")
        out[f"unknown_plain_L{lv}"] = program(d, f"observe o = {top}(1);")
        d, top = expr_chain(lv, "x + lamb")
        out[f"unknown_const_L{lv}"] = program(
            d, "run svc (c);", pre="let lam = 1;\n").replace(
            "\nworkload", f"\nlet c = {top}(1);\nworkload")
        d, top = expr_chain(lv, "x / x")
        out[f"nan_let_L{lv}"] = program(d, "run svc (c);").replace(
            "\nworkload", f"\nlet c = {top}(0);\nworkload")
    return out


def main() -> int:
    import pyserq  # the reference build: run this script only in its virtual environment
    if pyserq.__version__ != "0.1.2":
        print(f"expected pyserq 0.1.2, found {pyserq.__version__}", file=sys.stderr)
        return 2
    records = []
    for name, source in cases().items():
        try:
            pyserq.compile(source=source)
            error = None
        except ValueError as e:
            error = str(e)
        records.append({"name": name, "source": source, "error": error})
    json.dump({"provenance": f"pyserq {pyserq.__version__}: str(error) of "
                             f"pyserq.compile(source=...), recorded "
                             f"{datetime.date.today().isoformat()} by tools/probe_def_errors.py",
               "cases": records}, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
