"""Record how pyserq 0.1.2 prints f64 values to people (Rust's ``Display``), for
tests/ir/test_floats.py: parse errors name a number token (`unexpected 0.0000001 at top
level`), a run-time error names a branch guard's value (`the guard is -0.0000001, not 0 or
1`), the report's JSON writes the warm-up. Together they cover negative numbers, negative
zero, NaN, the infinities, subnormals, the 1e-5 / 1e16 boundaries and integers past 2^53.

    /tmp/refvenv/bin/python tools/probe_float_display.py > tests/ir/data/rust_display.json

Each record: the f64 (``float.hex``), the text the reference printed for it, and where it
was read (``lexer``, ``guard``, ``report``).
"""
import datetime
import json
import sys

LITERALS = ["1e-7", "1e-5", "0.00001", "1e-4", "1e16", "1e15", "9999999999999998",
            "1152921504606846976", "5e-324", "2.2250738585072014e-308", "1e-320", "1e300",
            "1e308", "1.7976931348623157e308", "1e999", "0.1", "123.456", "1e22", "1e23",
            "4.35", "0.3", "9007199254740993", "123456789012345680000", "0.000123"]
GUARDS = ["-1e-7", "-0.00001", "-1e16", "-1e15", "-1152921504606846976", "-5e-324",
          "-2.2250738585072014e-308", "2.225073858507201e-308", "-1e300",
          "-1.7976931348623157e308", "-123.456", "-0.1", "-1e22", "-1e23", "0.1 + 0.2",
          "1 / 3", "-2 / 3", "2 / 3 * 1e-10", "1e-5 * 3", "9.999999999999999e15", "1e16 * 3",
          "4503599627370497", "-9007199254740993", "0.000123", "1e-6 + 1e-22"]
SPECIAL = {"nan": ("(serial - serial) / (serial - serial)", float("nan")),
           "inf": ("(serial + 1) / (serial - serial)", float("inf")),
           "-inf": ("-(serial + 1) / (serial - serial)", float("-inf"))}
WARMUPS = ["-0", "0", "5e-324", "1e-7", "0.1", "1e-5"]


def guard_program(expr):
    return ("stage svc : fifo(1);\nworkload { arrive batch(1); session { request; } }\n"
            f"server {{ set g = {expr}; branch (g) {{ observe a = 1; }} }}\n"
            "run { horizon 20; }\n")


def main() -> int:
    import pyserq  # the reference build: run this script only in its virtual environment
    if pyserq.__version__ != "0.1.2":
        print(f"expected pyserq 0.1.2, found {pyserq.__version__}", file=sys.stderr)
        return 2
    records = []

    def between(text, before, after):
        start = text.index(before) + len(before)
        return text[start:text.index(after, start)]

    for lit in LITERALS:
        try:
            pyserq.compile(source=f"stage s : fifo;\n{lit}\n")
        except ValueError as e:
            shown = between(str(e), "unexpected ", " at top level")
        records.append({"value": float(lit).hex(), "text": shown, "from": "lexer",
                        "input": lit})
    cases = [(g, f"(serial - serial) + ({g})", 0.0 + eval(g)) for g in GUARDS]
    cases += [(k, expr, v) for k, (expr, v) in SPECIAL.items()]
    for name, expr, value in cases:
        try:
            pyserq.run(pyserq.compile(source=guard_program(expr)))
        except ValueError as e:
            shown = between(str(e), "the guard is ", ", not 0 or 1")
        records.append({"value": value.hex(), "text": shown, "from": "guard", "input": name})
    for w in WARMUPS:
        src = ("stage svc : fifo(1);\nworkload { arrive batch(1); session { request; } }\n"
               f"server {{ run svc (1); }}\nrun {{ horizon 20; warmup {w}; }}\n")
        shown = between(pyserq.run(pyserq.compile(source=src)).json(), '"warmup":', ',"seed"')
        records.append({"value": float(w).hex(), "text": shown, "from": "report", "input": w})
    json.dump({"provenance": f"pyserq {pyserq.__version__}, recorded "
                             f"{datetime.date.today().isoformat()} by "
                             f"tools/probe_float_display.py", "cases": records},
              sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
