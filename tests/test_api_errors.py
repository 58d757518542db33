"""The Python API raises only ValueError (bad values) or TypeError (bad types), as docs/api.md
promises (issue 8): no AttributeError from Program.from_json, no bare OverflowError from
compile's numbers. Where pyserq 0.1.2 raises a TypeError, serq's text is its text (probed
2026-12-01 with pyserq 0.1.2); where pyserq raises OverflowError, serq raises serq.RangeError
— a ValueError and an OverflowError — saying which argument and what range.
"""
import pytest

import serq

SOURCE = ("stage s : fifo;\nlet lam = 0.5;\nworkload { arrive poisson(lam); session { request; } }\n"
          "server { run s (~exp(1)); }\nrun { horizon 20; }\n")


@pytest.mark.parametrize("value", [b"{}", None, 3, bytearray(b"{}"), [1]])
def test_from_json_of_a_non_string_is_the_references_type_error(value):
    with pytest.raises(TypeError) as e:
        serq.Program.from_json(value)
    # pyserq 0.1.2: "argument 's': 'bytes' object cannot be converted to 'PyString'"
    assert str(e.value) == (f"argument 's': '{type(value).__name__}' object cannot be "
                            f"converted to 'PyString'")


@pytest.mark.parametrize("kwargs,text", [
    ({"seed": -1}, "argument 'seed': expected an integer from 0 to 2^64-1, got -1"),
    ({"seed": 2 ** 64},
     "argument 'seed': expected an integer from 0 to 2^64-1, got 18446744073709551616"),
    ({"arrivals": 2 ** 64},
     "argument 'arrivals': expected an integer from 0 to 2^64-1, got 18446744073709551616"),
    ({"arrivals": -(10 ** 50)},
     "argument 'arrivals': expected an integer from 0 to 2^64-1, got an integer of 51 digits"),
    ({"horizon": 10 ** 400},
     "argument 'horizon': an integer of 401 digits is too large for a float (at most about "
     "1.8e308)"),
    ({"warmup": -(10 ** 400)},
     "argument 'warmup': an integer of 401 digits is too large for a float (at most about "
     "1.8e308)"),
])
def test_numbers_out_of_range_are_value_errors(kwargs, text):
    with pytest.raises(ValueError) as e:
        serq.compile(source=SOURCE, **kwargs)
    assert type(e.value) is serq.RangeError
    assert isinstance(e.value, OverflowError)  # what pyserq raised: old handlers still work
    assert str(e.value) == text


def test_the_largest_seed_and_float_still_compile():
    assert serq.compile(source=SOURCE, seed=2 ** 64 - 1, horizon=10 ** 300).seed == 2 ** 64 - 1


@pytest.mark.parametrize("value", [10 ** 400, -(10 ** 400), 2 ** 1024])
def test_a_set_too_large_for_a_float_is_the_references_type_error(value):
    with pytest.raises(TypeError) as e:
        serq.compile(source=SOURCE, sets={"lam": value})
    assert str(e.value) == (
        "argument 'sets': failed to extract enum SetValue ('Num | Expr')\n"
        "- variant Num (Num): TypeError: failed to extract field SetValue::Num.0, caused by "
        "OverflowError: int too large to convert to float\n"
        "- variant Expr (Expr): TypeError: failed to extract field SetValue::Expr.0, caused by "
        "TypeError: 'int' object cannot be converted to 'PyString'")


@pytest.mark.parametrize("value", [3, None])
def test_read_trace_of_a_non_path_is_the_references_type_error(value):
    with pytest.raises(TypeError) as e:
        serq.read_trace(value)
    assert str(e.value) == (f"argument 'path': expected str, bytes or os.PathLike object, not "
                            f"{type(value).__name__}")
