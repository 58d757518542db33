"""`serq trace import` (docs/traces.md) on the hand-written samples of tests/traces/. Every
expected row is worked out by hand from the sample and the mapping in docs/traces.md."""
import os
import subprocess
import sys

import pytest

from serq.trace import load_trace
from serq.trace_import import TraceImportError, import_trace

HERE = os.path.join(os.path.dirname(__file__), "traces")


def sample(name):
    return os.path.join(HERE, name)


def convert(tmp_path, fmt, name, **kw):
    out = tmp_path / "out.csv"
    summary = import_trace(fmt, sample(name), out, **kw)
    return out.read_text().splitlines(), summary


def test_azure_2023(tmp_path):
    lines, s = convert(tmp_path, "azure", "azure_sample.csv")
    assert lines == [
        "# serq trace import azure azure_sample.csv",
        "session,turn,new,out,think,forced,at",
        "1,0,374,44,0,0,0",
        "2,0,396,109,0,0,4.314579",    # 18:15:50.9951690 - 18:15:46.6805900
        "3,0,879,19,0,0,4.81941",
        "4,0,91,7,0,0,11.56941",
        "5,0,1024,256,0,0,18.31941",
        "6,0,2048,12,0,0,18.31941",
    ]
    assert (s.rows, s.sessions, s.turns, s.first, s.last) == (6, 6, 6, 0.0, 18.31941)
    trace = load_trace(tmp_path / "out.csv")
    assert trace.times == [0.0, 4.314579, 4.81941, 11.56941, 18.31941, 18.31941]
    assert trace.sessions[0] == [(374.0, 44.0, 0.0, 0.0)]


def test_azure_2024_time_zone(tmp_path):
    lines, _ = convert(tmp_path, "azure", "azure2024_sample.csv")
    assert lines[2:] == ["1,0,2162,5,0,0,0", "2,0,120,300,0,0,0.5", "3,0,64,64,0,0,1.99007"]


def test_window_and_scale(tmp_path):
    # keep arrivals in [4, 12): rows 2-4 (4.314579, 4.81941, 11.56941); count from 4, x 0.5
    lines, s = convert(tmp_path, "azure", "azure_sample.csv", start=4, end=12, scale=0.5)
    assert lines[0] == "# serq trace import azure azure_sample.csv (times x 0.5)"
    assert lines[2:] == ["1,0,396,109,0,0,0.1572895", "2,0,879,19,0,0,0.409705",
                         "3,0,91,7,0,0,3.784705"]
    assert s.line() == ("wrote " + str(tmp_path / "out.csv") + ": 3 sessions, 3 turns from "
                        "4 azure rows; arrivals from 0.1572895 s to 3.784705 s")


def test_limit(tmp_path):
    lines, s = convert(tmp_path, "azure", "azure_sample.csv", limit=2)
    assert lines[2:] == ["1,0,374,44,0,0,0", "2,0,396,109,0,0,4.314579"]
    assert s.rows == 2  # the reader stopped there


def test_burstgpt(tmp_path):
    lines, s = convert(tmp_path, "burstgpt", "burstgpt_sample.csv")
    # the row at 45 s failed (0 response tokens): skipped
    assert lines[2:] == ["1,0,472,18,0,0,0", "2,0,417,217,0,0,113", "3,0,86,390,0,0,125.5",
                         "4,0,1210,95,0,0,241"]
    assert s.skipped == {"failed requests (0 response tokens)": 1}
    lines, s = convert(tmp_path, "burstgpt", "burstgpt_sample.csv", model="GPT-4")
    assert lines[2:] == ["1,0,417,217,0,0,113", "2,0,1210,95,0,0,241"]


def test_mooncake_single_requests(tmp_path):
    lines, _ = convert(tmp_path, "mooncake", "mooncake_sample.jsonl")
    assert lines[2:] == ["1,0,6755,500,0,0,0", "2,0,7319,490,0,0,0", "3,0,7234,794,0,0,3.052",
                         "4,0,300,12,0,0,3.5"]


def test_mooncake_sessions(tmp_path):
    lines, s = convert(tmp_path, "mooncake", "mooncake_sessions.jsonl")
    assert lines[2:] == [
        "1,0,600,40,2.5,0,0",   # a: arrives at 1000 ms; the next turn's delay 2500 ms
        "1,1,1200,60,0.5,0,",   # ids [1,2,3] begin with a's first full block [1]
        "1,2,700,10,0,1,",      # ids [1,7] do not begin with [1,2] (1200 // 512 = 2 blocks)
        "2,0,100,20,7.5,0,0.5",  # b: at 1500 ms; its next turn has no delay: 9000 - 1500 ms
        "2,1,180,30,0,0,",
    ]
    assert (s.sessions, s.turns) == (2, 5)
    lines, _ = convert(tmp_path, "mooncake", "mooncake_sessions.jsonl", block_size=1024)
    assert lines[4] == "1,2,700,10,0,0,"  # 1200 // 1024 = 1 full block: [1] == [1]


def test_mooncake_window_drops_whole_sessions(tmp_path):
    lines, _ = convert(tmp_path, "mooncake", "mooncake_sessions.jsonl", start=0.2)
    assert lines[2:] == ["1,0,100,20,7.5,0,0.3", "1,1,180,30,0,0,"]


def test_sharegpt(tmp_path):
    lines, s = convert(tmp_path, "sharegpt", "sharegpt_sample.json")
    # ceil(chars / 4): "How many legs does a spider have?" 33 -> 9, "A spider has eight
    # legs." 24 -> 6, "And an insect?" 14 -> 4 (prompt 9 + 6 + 4), "Six." 4 -> 1;
    # "Answer briefly." 15 -> 4 + "Name a prime." 13 -> 4, "Seven is prime." 15 -> 4
    assert lines == ["# serq trace import sharegpt sharegpt_sample.json",
                     "session,turn,new,out,think,forced",
                     "1,0,9,6,0,0", "1,1,19,1,0,0", "2,0,8,4,0,0"]
    assert s.skipped == {"unanswered last messages": 1,
                         "conversations without an answered message": 1}
    assert load_trace(tmp_path / "out.csv").times is None
    lines, _ = convert(tmp_path, "sharegpt", "sharegpt_sample.json", chars_per_token=8)
    assert lines[2:] == ["1,0,5,3,0,0", "1,1,10,1,0,0", "2,0,4,2,0,0"]


def test_sharegpt_json_lines_and_messages(tmp_path):
    src = tmp_path / "c.jsonl"
    src.write_text('{"messages": [{"role": "user", "content": "abcd"}, '
                   '{"role": "assistant", "content": "abcdefgh"}]}\n'
                   '{"conversations": [{"from": "human", "value": "a"}, '
                   '{"from": "human", "value": "bcde"}, {"from": "gpt", "value": "x"}]}\n')
    out = tmp_path / "o.csv"
    import_trace("sharegpt", src, out)
    # (each message is counted on its own: "a" 1 token + "bcde" 1 token)
    assert out.read_text().splitlines()[2:] == ["1,0,1,2,0,0", "2,0,2,1,0,0"]


# ---------------------------------------------------------------------------------------
# errors name the file and line


def bad(tmp_path, fmt, text, name="bad.txt", **kw):
    src = tmp_path / name
    src.write_text(text)
    with pytest.raises(TraceImportError) as info:
        import_trace(fmt, src, tmp_path / "o.csv", **kw)
    return str(info.value).replace(str(src), "F")


def test_csv_errors(tmp_path):
    assert bad(tmp_path, "azure", "TIMESTAMP,ContextTokens,GeneratedTokens\n"
               "2023-11-16 18:15:46,12,x\n") == (
        "F:2: column `GeneratedTokens`: expected a token count (a whole number, not "
        "negative), found `x`")
    assert bad(tmp_path, "azure", "TIMESTAMP,ContextTokens,GeneratedTokens\n"
               "2023-11-16 18:15:46,12,3\nyesterday,1,1\n") == (
        "F:3: column `TIMESTAMP`: expected a date and time like `2023-11-16 18:15:46.6805900`, "
        "found `yesterday`")
    assert bad(tmp_path, "azure", "TIMESTAMP,ContextTokens,GeneratedTokens\n"
               "2023-11-16 18:15:46,12,3\n2023-11-16 18:15:40,1,1\n") == (
        "F:3: this row's time is earlier than the row before it (-6 s < 0 s after the first "
        "row); the rows must be in time order")
    assert bad(tmp_path, "burstgpt", "Timestamp,Model,Request tokens\n1,a,2\n") == (
        "F:1: the header lacks the columns `Response tokens`, `Total tokens`, `Log Type`\n"
        "help: the header is `Timestamp,Model,Request tokens`; this format's columns are "
        "`Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type`")
    assert bad(tmp_path, "burstgpt", "Timestamp,Model,Request tokens,Response tokens,"
               "Total tokens,Log Type\n1,ChatGPT,2,3\n") == (
        "F:2: expected 6 fields as in the header, got 4")
    assert bad(tmp_path, "azure", "") == (
        "F: empty file (no header line `TIMESTAMP,ContextTokens,GeneratedTokens`)")
    assert bad(tmp_path, "azure", "TIMESTAMP,ContextTokens,GeneratedTokens\n") == (
        "F: no request to convert")


def test_jsonl_errors(tmp_path):
    assert bad(tmp_path, "mooncake", '{"timestamp": 0, "input_length": 5, "output_length": 1}\n'
               '{"timestamp": 1, "input_length": 5,\n') == (
        "F:2:36: invalid JSON: Expecting property name enclosed in double quotes")
    assert bad(tmp_path, "mooncake", '{"timestamp": 0, "output_length": 1}\n') == (
        "F:1: the row has no `input_length` field")
    assert bad(tmp_path, "mooncake", '{"timestamp": -5, "input_length": 5, '
               '"output_length": 1}\n') == (
        "F:1: `timestamp`: expected a time in milliseconds (a number, not negative), found -5")
    assert bad(tmp_path, "mooncake", '[1, 2]\n') == (
        "F:1: expected a JSON object a line (Mooncake JSONL), found list")
    assert bad(tmp_path, "mooncake", '{"timestamp": 0, "input_length": 2.5, '
               '"output_length": 1}\n') == (
        "F:1: `input_length`: expected a token count (a whole number, not negative), found 2.5")


def test_sharegpt_errors(tmp_path):
    assert bad(tmp_path, "sharegpt", '[\n  {"id": 1, "conversations": []},\n'
               '  {"id": 2, "conversations": [{"from": "robot", "value": "hi"}]}\n]\n') == (
        "F:3: message 1: unknown role `robot`\nhelp: roles are human, user, gpt, chatgpt, "
        "assistant, bard, bing, model, system")
    assert bad(tmp_path, "sharegpt", '[\n  {"id": 1}\n]') == (
        "F:2: the conversation has no `conversations` list (nor `messages`)")
    assert bad(tmp_path, "sharegpt", '[\n  {"id": 1,\n') == (
        "F:3:1: invalid JSON: Expecting property name enclosed in double quotes")
    assert bad(tmp_path, "sharegpt", '[{"conversations": []}] x') == (
        "F: no request to convert")  # (trailing text after the array is not read)
    assert bad(tmp_path, "sharegpt", "[]", start=1.0) == (
        "ShareGPT conversations have no times: --start and --end do not apply (use --limit)")


def test_option_errors(tmp_path):
    assert bad(tmp_path, "azure", "", scale=0) == "--scale must be a positive finite number, got 0"
    assert bad(tmp_path, "azure", "", start=5, end=5) == "--start 5 must be before --end 5"
    with pytest.raises(TraceImportError):
        import_trace("vidur", sample("azure_sample.csv"), tmp_path / "o.csv")


def test_missing_input(tmp_path):
    with pytest.raises(TraceImportError) as info:
        import_trace("azure", tmp_path / "nope.csv", tmp_path / "o.csv")
    assert str(info.value) == f"cannot read {tmp_path / 'nope.csv'}: No such file or directory (os error 2)"


# ---------------------------------------------------------------------------------------
# the command


def serq(*args):
    return subprocess.run([sys.executable, "-m", "serq", *args], capture_output=True,
                          text=True, timeout=60)


def test_cli(tmp_path):
    out = tmp_path / "az.csv"
    r = serq("trace", "import", "azure", sample("azure_sample.csv"), str(out), "--limit", "3")
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""
    assert r.stderr == (f"serq: wrote {out}: 3 sessions, 3 turns from 3 azure rows; arrivals "
                        "from 0 s to 4.81941 s\n")
    assert len(load_trace(out).sessions) == 3


def test_cli_errors(tmp_path):
    r = serq("trace", "import", "azure", sample("burstgpt_sample.csv"), str(tmp_path / "o"))
    assert r.returncode == 1
    assert r.stderr.startswith(f"{sample('burstgpt_sample.csv')}:1: the header lacks")
    r = serq("trace", "import", "vidur", "a", "b")
    assert r.returncode == 2 and "invalid choice: 'vidur'" in r.stderr
    r = serq("trace", "import", "azure", "a", "b", "--block-size", "64")
    assert r.returncode == 2 and "--block-size applies to mooncake traces only" in r.stderr
    r = serq("trace", "import", "azure", "a", "b", "--limit", "0")
    assert r.returncode == 2 and "expected a whole number of at least 1, got 0" in r.stderr


def test_imported_trace_runs(tmp_path):
    """An imported Azure trace drives a run: 6 sessions at their recorded times."""
    out = tmp_path / "az.csv"
    import_trace("azure", sample("azure_sample.csv"), out)
    prog = tmp_path / "p.sq"
    prog.write_text(f'stage s : fifo(1);\nworkload {{ arrive poisson(1); trace "{out}"; }}\n'
                    "session { turn; observe at = now; run s (out / 1000); end; }\n"
                    "run { horizon 60; seed 1; }\n")
    import serq as lib
    rep = lib.run(lib.compile(str(prog)))
    assert rep.arrivals == 6
    assert list(rep.observes["at"].samples) == [0.0, 4.314579, 4.81941, 11.56941, 18.31941,
                                                18.31941]


def test_the_committed_conversion_is_current(tmp_path):
    """tests/traces/azure_sample.serq.csv (read by engine_trace.sq, shown in docs/traces.md)
    is what the importer writes for azure_sample.csv."""
    out = tmp_path / "a.csv"
    import_trace("azure", sample("azure_sample.csv"), out)
    assert out.read_text() == open(sample("azure_sample.serq.csv")).read()


def test_the_docs_replay_example(monkeypatch):
    import serq as lib
    monkeypatch.chdir(os.path.dirname(HERE))  # any directory: the trace is read beside the program
    monkeypatch.chdir("..")
    rep = lib.run(lib.compile(sample("engine_trace.sq")))
    assert (rep.arrivals, rep.ended, rep.turns, rep.events) == (6, 6, 6, 427)
