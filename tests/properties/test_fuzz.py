"""Property tests (hypothesis): serq reports bad input only ever with a clean ValueError.

(a) random text and bytes given to `serq.compile(source=...)`;
(b) valid programs (the corpus's compile/ and run/ sources) mutated at random, token by token
    and character by character;
(c) `Program.from_json(p.to_json()).to_json() == p.to_json()` for every valid program;
(d) IR texts mutated at random (as text and as JSON values) given to `Program.from_json`.

The default run stays short (a few hundred examples per property); the `slow` sweeps
(`pytest -m slow tests/properties`) run many more.
"""
import json
import os
import pathlib
import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import serq

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = pathlib.Path(os.environ.get("SERQ_SHARED", ROOT.parent / "shared")).resolve()
CORPUS = SHARED / "conformance"



def _read(path: pathlib.Path) -> str:
    return path.read_text(encoding="utf-8")


def test_corpus_is_present():
    """Without the corpus the properties below run on the examples alone: say so loudly."""
    if not CORPUS.is_dir():
        pytest.fail(f"the conformance corpus is missing: {CORPUS} does not exist (clone the "
                    f"`shared` folder beside the repository, or set SERQ_SHARED)", pytrace=False)


def _args(sq: pathlib.Path) -> dict:
    a = sq.with_name(sq.name[: -len(".sq")] + ".args.json")
    return json.loads(_read(a)) if a.exists() else {}


SQ_FILES = sorted((CORPUS / "compile").glob("*.sq")) + sorted((CORPUS / "run").glob("*.sq"))
SOURCES = [_read(p) for p in SQ_FILES] + [_read(p) for p in sorted((ROOT / "examples").glob("*.sq"))]
IR_TEXTS = [_read(p)[:-1] for p in sorted((CORPUS / "compile").glob("*.ir.json"))]
IR_TEXTS += [_read(p)[:-1] for p in sorted((ROOT / "tests" / "golden").glob("*.ir.json"))]
if (CORPUS / "load" / "cases.jsonl").exists():
    IR_TEXTS += [c["ir"] for c in map(json.loads, _read(CORPUS / "load" / "cases.jsonl").splitlines())]

# programs whose IR the reference itself cannot read back: an infinite plain f64 (a Poisson
# rate, a block) is written as `null`, which `from_json` refuses (ir.md §1.4)
NOT_LOADABLE = {"inf_plain_fields", "ir10_24_quirk_nonfinite_plain_f64", "ov_sets_float_inf",
                "ov_sets_inf"}

FAST = settings(max_examples=200, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
SLOW = settings(max_examples=5000, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def compiles_cleanly(source: str, **kw):
    """Compile; any outcome but a Program or a ValueError fails. Returns the Program or None."""
    try:
        program = serq.compile(source=source, **kw)
    except ValueError:
        return None
    assert isinstance(program, serq.Program)
    return program


def loads_cleanly(text: str):
    try:
        program = serq.Program.from_json(text)
    except ValueError:
        return None
    assert isinstance(program, serq.Program)
    return program


def round_trips_if_it_loads(program):
    """A compiled program's IR either loads back to the same text or is refused cleanly."""
    text = program.to_json()
    again = loads_cleanly(text)
    if again is not None:
        assert again.to_json() == text


# ---------------------------------------------------------------------------------------
# (a) random text and bytes

# characters the language uses, so that random text reaches past the lexer now and then
LANG_ALPHABET = st.sampled_from(list("{}()[],;:.=~?+-*/^<>!&|\"#_ \n\t0123456789eE") + [
    "let ", "def ", "pool ", "stage ", "fifo", "ps", "delay", "step", "workload ", "session ",
    "server ", "run ", "hold ", "set ", "observe ", "branch ", "loop ", "turn;", "end;",
    "request;", "arrive poisson(1);", "horizon 10;", "kv", "s", "x", "inf", "now", "~exp(1)",
    "cap ", "block ", "budget ", "cost ", "chunk ", "memory ", "queue ", "gauge ", "use ",
    "//", "/*", "*/", "prefill ", "decode ", "tool ", "transfer ", "at admission ", "with ",
])
LANG_TEXT = st.lists(LANG_ALPHABET, max_size=60).map("".join)


@FAST
@given(st.text(max_size=300))
def test_random_text(text):
    compiles_cleanly(text)


@FAST
@given(st.binary(max_size=300))
def test_random_bytes(data):
    compiles_cleanly(data.decode("utf-8", errors="replace"))
    compiles_cleanly(data.decode("latin-1"))


@FAST
@given(LANG_TEXT)
def test_random_language_shaped_text(text):
    compiles_cleanly(text)
    compiles_cleanly(text, horizon=10.0)


# ---------------------------------------------------------------------------------------
# (b) mutated valid programs

TOKEN = re.compile(r"\s+|//[^\n]*|[A-Za-z_][A-Za-z_0-9]*|[0-9][0-9._]*(?:[eE][+-]?[0-9]+)?|\S", re.S)
INSERTS = ["{", "}", "(", ")", "[", "]", ";", ",", ".", "=", "~", "?", ":", "-", "*", "^", "!",
           "0", "1", "0.5", "1e400", "inf", "x", "now", "kv", "turn", "end", "request", "hold",
           "run", "set", "let", "def", "branch", "else", "loop", "choose", "in", "by", "at",
           "admission", "reuse", "reserve", "cache", "lease", "growing", "prefill", "decode",
           "self", "present", "tokens", "cached", "computed", "sum", "max", "j", "\"", "/*"]

NUMBERS = ["0", "1", "2", "0.5", "3", "16", "100", "1e400", "0.0000001", "4097", "10001"]
OPS = ["delete", "duplicate", "swap", "insert", "char", "cut", "rename", "renumber"]
MUTATION = st.tuples(st.sampled_from(OPS), st.integers(0, 10**6), st.integers(0, 10**6),
                     st.sampled_from(INSERTS))
IDENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


def mutate(source: str, ops) -> str:
    tokens = [t for t in TOKEN.findall(source)]
    for op, i, j, word in ops:
        if not tokens:
            tokens = [word]
            continue
        i %= len(tokens)
        j %= len(tokens)
        if op == "delete":
            del tokens[i]
        elif op == "duplicate":
            tokens.insert(i, tokens[i])
        elif op == "swap":
            tokens[i], tokens[j] = tokens[j], tokens[i]
        elif op == "insert":
            tokens.insert(i, " " + word + " ")
        elif op == "char":
            t = tokens[i]
            k = j % (len(t) + 1)
            tokens[i] = t[:k] + word[:1] + t[k + 1:]
        elif op == "cut":  # drop a run of tokens
            a, b = sorted((i, j))
            del tokens[a:min(b + 1, a + 20)]
        elif op == "rename":  # an identifier becomes another of the program's: often still parses
            names = [t for t in tokens if IDENT.fullmatch(t)]
            spots = [k for k, t in enumerate(tokens) if IDENT.fullmatch(t)]
            if spots:
                tokens[spots[i % len(spots)]] = names[j % len(names)]
        elif op == "renumber":  # a number becomes another: reaches the linker and validation
            spots = [k for k, t in enumerate(tokens) if t[:1].isdigit()]
            if spots:
                tokens[spots[i % len(spots)]] = NUMBERS[j % len(NUMBERS)]
    return "".join(tokens)


def _mutated_program_property(index, ops, with_horizon):
    source = mutate(SOURCES[index % len(SOURCES)], ops)
    kw = {"horizon": 50.0} if with_horizon else {}
    program = compiles_cleanly(source, **kw)
    if program is not None:
        round_trips_if_it_loads(program)


@FAST
@given(st.integers(0, 10**6), st.lists(MUTATION, min_size=1, max_size=6), st.booleans())
def test_mutated_programs(index, ops, with_horizon):
    _mutated_program_property(index, ops, with_horizon)


@pytest.mark.slow
@SLOW
@given(st.integers(0, 10**6), st.lists(MUTATION, min_size=1, max_size=12), st.booleans())
def test_mutated_programs_sweep(index, ops, with_horizon):
    _mutated_program_property(index, ops, with_horizon)


def test_every_corpus_source_mutated_once():
    """One deterministic mutation round over every source, so none is never sampled."""
    rng = random.Random(12345)
    for n, source in enumerate(SOURCES):
        ops = [(rng.choice(OPS),
                rng.randrange(10**6), rng.randrange(10**6), rng.choice(INSERTS))
               for _ in range(rng.randint(1, 4))]
        _mutated_program_property(n, ops, n % 2 == 0)


# ---------------------------------------------------------------------------------------
# (c) round trip of valid programs


class _Chdir:
    def __init__(self, d):
        self.d = d

    def __enter__(self):
        self.old = os.getcwd()
        os.chdir(self.d)

    def __exit__(self, *exc):
        os.chdir(self.old)


def compile_corpus_case(sq: pathlib.Path):
    kw = _args(sq)
    by_file = kw.pop("_file", False)
    with _Chdir(sq.parent):
        if by_file:
            return serq.compile("./" + sq.name, **kw)
        return serq.compile(source=_read(sq), **kw)


@pytest.mark.parametrize("sq", SQ_FILES, ids=[f"{p.parent.name}/{p.stem}" for p in SQ_FILES])
def test_round_trip(sq):
    text = compile_corpus_case(sq).to_json()
    if sq.stem in NOT_LOADABLE:
        with pytest.raises(ValueError, match=r"^IR: invalid type: null, expected f64 at line "):
            serq.Program.from_json(text)
        return
    program = serq.Program.from_json(text)
    assert program.to_json() == text
    # and a second time, from the loaded program
    assert serq.Program.from_json(program.to_json()).to_json() == text


# ---------------------------------------------------------------------------------------
# (d) mutated IR texts

JSON_INSERTS = list('{}[]",:-.0123456789eE+ntfaulsr \n') + ["null", "true", "1e400", "-0", '"x"',
                                                            '"inf"', "[]", "{}", "1.5", "99999999999999999999"]
TEXT_MUTATION = st.tuples(st.sampled_from(["delete", "insert", "replace", "cut", "dup"]),
                          st.integers(0, 10**7), st.integers(0, 400), st.sampled_from(JSON_INSERTS))


def mutate_text(text: str, ops) -> str:
    for op, i, n, s in ops:
        if not text:
            text = s
            continue
        i %= len(text)
        if op == "delete":
            text = text[:i] + text[i + 1:]
        elif op == "insert":
            text = text[:i] + s + text[i:]
        elif op == "replace":
            text = text[:i] + s + text[i + 1:]
        elif op == "cut":
            text = text[:i] + text[i + n:]
        else:
            text = text[:i] + text[i:i + n] + text[i:]
    return text


JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 2**65),
                         st.floats(allow_nan=False, allow_infinity=False),
                         st.sampled_from(["inf", "-inf", "Lru", "None", "Lifo", "Plain", "Turn", "End",
                                          "Num", "Attr", "Ctx", "Now", "x", ""]))
JSON_VALUES = st.recursive(JSON_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(
        ["Num", "Attr", "Ctx", "Sample", "Call", "Binary", "Set", "Run", "Hold", "base", "count",
         "index", "name", "cap", "x"]), inner, max_size=2)), max_leaves=6)


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for k, v in enumerate(value):
            yield from _paths(v, prefix + (k,))


def mutate_value(value, choice, op, new):
    paths = list(_paths(value))
    path = paths[choice % len(paths)]
    if not path:
        return new if op == "replace" else value
    parent = value
    for k in path[:-1]:
        parent = parent[k]
    key = path[-1]
    if op == "replace":
        parent[key] = new
    elif op == "delete":
        del parent[key]
    elif op == "rename" and isinstance(parent, dict):
        parent[str(new)[:12]] = parent.pop(key)
    elif op == "wrap":
        parent[key] = [parent[key]]
    elif op == "unwrap" and isinstance(parent[key], (list, dict)) and parent[key]:
        inner = parent[key]
        parent[key] = inner[0] if isinstance(inner, list) else next(iter(inner.values()))
    return value


VALUE_MUTATION = st.tuples(st.integers(0, 10**6), st.sampled_from(["replace", "delete", "rename", "wrap", "unwrap"]),
                           JSON_VALUES)


def _mutated_ir_text_property(index, ops):
    loads_cleanly(mutate_text(IR_TEXTS[index % len(IR_TEXTS)], ops))


def _mutated_ir_value_property(index, ops, pretty):
    try:
        value = json.loads(IR_TEXTS[index % len(IR_TEXTS)])
    except ValueError:  # some load cases are not JSON at all
        return
    for choice, op, new in ops:
        value = mutate_value(value, choice, op, new)
    text = json.dumps(value, indent=2 if pretty else None)
    program = loads_cleanly(text)
    if program is not None:  # whatever loads must write itself back stably
        out = program.to_json()
        again = loads_cleanly(out)
        if again is not None:
            assert again.to_json() == out


@FAST
@given(st.integers(0, 10**6), st.lists(TEXT_MUTATION, min_size=1, max_size=5))
def test_mutated_ir_texts(index, ops):
    _mutated_ir_text_property(index, ops)


@FAST
@given(st.integers(0, 10**6), st.lists(VALUE_MUTATION, min_size=1, max_size=4), st.booleans())
def test_mutated_ir_values(index, ops, pretty):
    _mutated_ir_value_property(index, ops, pretty)


@pytest.mark.slow
@SLOW
@given(st.integers(0, 10**6), st.lists(TEXT_MUTATION, min_size=1, max_size=10))
def test_mutated_ir_texts_sweep(index, ops):
    _mutated_ir_text_property(index, ops)


@pytest.mark.slow
@SLOW
@given(st.integers(0, 10**6), st.lists(VALUE_MUTATION, min_size=1, max_size=8), st.booleans())
def test_mutated_ir_values_sweep(index, ops, pretty):
    _mutated_ir_value_property(index, ops, pretty)


@FAST
@given(st.text(max_size=200))
def test_random_ir_text(text):
    loads_cleanly(text)
