"""read_trace (ir.md §6.1) on small files; every expected value worked out by hand from the spec."""
import errno
import math
import os
import pathlib

import pytest

from serq.errors import IRError
from serq.trace import parse_f64, read_trace

FIELDS_HELP = "help: use session,turn,new,out,think[,forced]"
EMPTY = "empty trace\nhelp: add a data row using session,turn,new,out,think[,forced]"


@pytest.fixture
def write(tmp_path):
    """write(text) -> path of a new trace file holding exactly `text` (UTF-8, no newline translation)."""
    counter = iter(range(10**6))

    def _write(text, *, raw=None):
        path = tmp_path / f"t{next(counter)}.csv"
        path.write_bytes(raw if raw is not None else text.encode("utf-8"))
        return str(path)
    return _write


def bad_number(path, line, col, name, text):
    return (f"trace {path}: line {line}: column {col} ({name}): invalid number `{text}`\n"
            f"help: replace `{name}` with a numeric value")


def fails(path):
    with pytest.raises(IRError) as info:
        read_trace(path)
    return str(info.value)


# ---------------------------------------------------------------------------------------
# the format


def test_basic_file_with_header_comment_and_blank_line(write):
    p = write("session,turn,new,out,think,forced\n"
              "# a comment\n"
              "\n"
              "1,1,100,20,0.5\n"
              "1,2,30,10,2,1\n"
              "2,1,7,8,0\n")
    assert read_trace(p) == [[(100.0, 20.0, 0.5, 0.0), (30.0, 10.0, 2.0, 1.0)],
                             [(7.0, 8.0, 0.0, 0.0)]]


def test_values_are_floats_in_lists_of_tuples(write):
    sessions = read_trace(write("3,1,4,5,6\n"))
    assert isinstance(sessions, list) and isinstance(sessions[0], list)
    assert isinstance(sessions[0][0], tuple)
    assert all(type(v) is float for v in sessions[0][0])


def test_forced_defaults_to_zero_with_five_fields(write):
    assert read_trace(write("1,1,2,3,4\n1,2,5,6,7,1\n")) == [[(2.0, 3.0, 4.0, 0.0), (5.0, 6.0, 7.0, 1.0)]]


def test_consecutive_rows_with_the_same_id_form_a_session(write):
    # ids need not be sorted or unique: 5,3,5 is three sessions
    p = write("5,1,1,0,0\n3,1,2,0,0\n5,1,3,0,0\n5,2,4,0,0\n")
    assert read_trace(p) == [[(1.0, 0.0, 0.0, 0.0)], [(2.0, 0.0, 0.0, 0.0)],
                             [(3.0, 0.0, 0.0, 0.0), (4.0, 0.0, 0.0, 0.0)]]


def test_session_id_is_cast_to_u64(write):
    # truncation: 1.2 and 1.7 are session 1; negatives, -0 and NaN are 0;
    # saturation: 1e30 and inf are both 2^64 - 1
    p = write("1.2,1,1,0,0\n1.7,1,2,0,0\n"
              "-3,1,3,0,0\n0,1,4,0,0\nnan,1,5,0,0\n-0.5,1,6,0,0\n"
              "1e30,1,7,0,0\ninf,1,8,0,0\n"
              "18446744073709549568,1,9,0,0\n")
    assert [[t[0] for t in s] for s in read_trace(p)] == [[1.0, 2.0], [3.0, 4.0, 5.0, 6.0],
                                                          [7.0, 8.0], [9.0]]


def test_turn_column_is_never_read(write):
    p = write("1,,1,0,0\n1,not a number,2,0,0\n1,-x-,3,0,0\n")
    assert read_trace(p) == [[(1.0, 0.0, 0.0, 0.0), (2.0, 0.0, 0.0, 0.0), (3.0, 0.0, 0.0, 0.0)]]


def test_lines_are_trimmed(write):
    p = write("  1,1,1,0,0  \r\n\t2,1,2,0,0\t\n\u00a03,1,3,0,0\u2028\n\x0b4,1,4,0,0\x0c\n")
    assert read_trace(p) == [[(1.0, 0.0, 0.0, 0.0)], [(2.0, 0.0, 0.0, 0.0)],
                             [(3.0, 0.0, 0.0, 0.0)], [(4.0, 0.0, 0.0, 0.0)]]


def test_trimming_is_rusts_not_pythons(write):
    # U+001C..U+001F are whitespace to Python's str.strip() but not to Rust's str::trim
    p = write("\x1c1,1,1,0,0\n")
    assert fails(p) == bad_number(p, 1, 1, "session", "\x1c1")
    # a byte-order mark is not whitespace either
    p = write("\ufeff1,1,1,0,0\n")
    assert fails(p) == bad_number(p, 1, 1, "session", "\ufeff1")


def test_fields_are_not_trimmed(write):
    p = write("1,1, 2,3,4\n")
    assert fails(p) == bad_number(p, 1, 3, "new", " 2")
    p = write("1,1,2,3 ,4\n")
    assert fails(p) == bad_number(p, 1, 4, "out", "3 ")


def test_header_lines_are_skipped_anywhere(write):
    # any line that starts with the lowercase word `session`, comments starting with `#`
    p = write("1,1,1,0,0\nsession,turn,new,out,think\nsessions\n  # indented comment\n#\n1,2,2,0,0\n")
    assert read_trace(p) == [[(1.0, 0.0, 0.0, 0.0), (2.0, 0.0, 0.0, 0.0)]]


def test_capitalised_header_is_data(write):
    p = write("Session,turn,new,out,think\n1,1,1,0,0\n")
    assert fails(p) == bad_number(p, 1, 1, "session", "Session")


def test_lone_carriage_return_does_not_end_a_line(write):
    p = write("1,1,1,1,1\r2,1,1,1,1\r")
    assert fails(p) == f"trace {p}: line 1: expected 5 or 6 fields, got 9\n{FIELDS_HELP}"


def test_last_line_without_newline(write):
    assert read_trace(write("1,1,1,0,0\n2,1,2,0,0")) == [[(1.0, 0.0, 0.0, 0.0)], [(2.0, 0.0, 0.0, 0.0)]]


# ---------------------------------------------------------------------------------------
# numbers: Rust's f64 parser


@pytest.mark.parametrize("text,value", [
    ("5", 5.0), ("+5", 5.0), ("-5", -5.0), (".5", 0.5), ("5.", 5.0), ("-.5", -0.5),
    ("007", 7.0), ("1e3", 1000.0), ("1E3", 1000.0), ("1e+3", 1000.0), ("1.5e-3", 0.0015),
    (".5e1", 5.0), ("5.e1", 50.0), ("1e400", math.inf), ("1e-400", 0.0),
    ("inf", math.inf), ("INF", math.inf), ("+inf", math.inf), ("-inf", -math.inf),
    ("infinity", math.inf), ("Infinity", math.inf), ("-InFiNiTy", -math.inf),
])
def test_accepted_numbers(write, text, value):
    p = write(f"1,1,{text},0,0\n")
    assert read_trace(p) == [[(value, 0.0, 0.0, 0.0)]]


@pytest.mark.parametrize("text", ["nan", "NaN", "NAN", "+nan", "-NaN"])
def test_nan_spellings(write, text):
    (((new, out, think, forced),),) = read_trace(write(f"1,1,{text},0,0\n"))
    assert math.isnan(new) and (out, think, forced) == (0.0, 0.0, 0.0)


def test_negative_zero_keeps_its_sign(write):
    (((new, _, _, _),),) = read_trace(write("1,1,-0,0,0\n"))
    assert new == 0.0 and math.copysign(1.0, new) == -1.0


@pytest.mark.parametrize("text", [
    "", "1_000", "1 ", " 1", "1\t", "0x10", "1e", "1e+", ".", ".e3", "e3", "+", "-", "+-1",
    "--1", "1.2.3", "infinit", "infinityx", "inff", "i", "nana", "1;5",
    "\u0661", "\uff11", "1 # x", "five",
])
def test_rejected_numbers(write, text):
    p = write(f"1,1,{text},0,0\n")
    assert fails(p) == bad_number(p, 1, 3, "new", text)


def test_parse_f64_directly():
    assert parse_f64("2.5") == 2.5
    assert parse_f64("1_0") is None  # Python's float() would say 10.0
    assert parse_f64(" 1") is None  # Python's float() would say 1.0
    assert parse_f64("1\n") is None
    assert parse_f64("\u0661") is None  # Python's float() would say 1.0
    assert parse_f64("infinity") == math.inf


# ---------------------------------------------------------------------------------------
# errors


@pytest.mark.parametrize("row,count", [("1,1,2,3", 4), ("1,1,2,3,4,5,6", 7), ("1", 1), ("1,1,1,1,1,", 6)])
def test_field_count(write, row, count):
    p = write(row + "\n")
    if count == 6:  # a trailing comma makes an empty sixth field
        assert fails(p) == bad_number(p, 1, 6, "forced", "")
    else:
        assert fails(p) == f"trace {p}: line 1: expected 5 or 6 fields, got {count}\n{FIELDS_HELP}"


def test_line_numbers_count_skipped_lines(write):
    p = write("session,turn,new,out,think\n# c\n\n1,1,1,1,1\n1,1,1,1\n")
    assert fails(p) == f"trace {p}: line 5: expected 5 or 6 fields, got 4\n{FIELDS_HELP}"


def test_columns_are_checked_left_to_right(write):
    p = write("x,1,y,1,1\n")
    assert fails(p) == bad_number(p, 1, 1, "session", "x")
    p = write("1,1,1,y,z\n")
    assert fails(p) == bad_number(p, 1, 4, "out", "y")
    p = write("1,1,1,1,q\n")
    assert fails(p) == bad_number(p, 1, 5, "think", "q")
    p = write("1,1,1,1,1,abc\n")
    assert fails(p) == bad_number(p, 1, 6, "forced", "abc")


def test_the_first_bad_line_is_reported(write):
    p = write("1,1,1,1,1\n1,1,1\n1,1,x,1,1\n")
    assert fails(p) == f"trace {p}: line 2: expected 5 or 6 fields, got 3\n{FIELDS_HELP}"


@pytest.mark.parametrize("text", ["", "\n", "   \n\t\n", "session,turn,new,out,think\n# only a header\n"])
def test_empty_trace(write, text):
    p = write(text)
    assert fails(p) == f"trace {p}: {EMPTY}"


def test_missing_file(tmp_path):
    p = str(tmp_path / "nope.csv")
    assert fails(p) == f"cannot read trace {p}: {os.strerror(errno.ENOENT)} (os error {errno.ENOENT})"


@pytest.mark.skipif(os.name != "posix", reason="reading a directory fails this way on POSIX only")
def test_directory(tmp_path):
    p = str(tmp_path)
    assert fails(p) == f"cannot read trace {p}: {os.strerror(errno.EISDIR)} (os error {errno.EISDIR})"


def test_invalid_utf8(write):
    p = write("", raw=b"1,1,1,1,1\n\xff,1,1,1,1\n")
    assert fails(p) == f"cannot read trace {p}: stream did not contain valid UTF-8"


def test_errors_are_value_errors(write):
    with pytest.raises(ValueError):
        read_trace(write(""))


def test_path_like_and_relative_paths(write, tmp_path, monkeypatch):
    p = write("1,1,1,2,3\n")
    assert read_trace(pathlib.Path(p)) == [[(1.0, 2.0, 3.0, 0.0)]]
    monkeypatch.chdir(tmp_path)
    name = os.path.basename(p)
    assert read_trace(name) == [[(1.0, 2.0, 3.0, 0.0)]]
    # the message names the path as given
    assert fails("missing.csv").startswith("cannot read trace missing.csv: ")


def test_read_trace_is_exported():
    import serq
    assert serq.read_trace is read_trace
