"""The session states and frame kinds are named in states.py (Python) and states.pxd (C, for
the compiled modules); the two must give every name the same value, or the compiled and the
interpreted engines would disagree about a session's state."""
import pathlib
import re

from serq.sim import states

PXD = pathlib.Path(states.__file__).with_suffix(".pxd")


def pxd_constants():
    return {name: int(value) for name, value in
            re.findall(r"^\s+([A-Z_]+) = (\d+)$", PXD.read_text(), flags=re.M)}


def test_the_pxd_enum_and_the_python_names_agree():
    c = pxd_constants()
    assert c == {"READY": 0, "QUEUED": 1, "IN_STAGE": 2, "GROWING": 3, "ENDED": 4,
                 "PLAIN": 0, "LOOP": 1, "HOLD": 2}
    assert c == {name: getattr(states, name) for name in c}


def test_no_other_module_of_the_simulator_names_them_again():
    """The near-copies that were in sessions, stages, pools, step and monitors stay gone."""
    sim = PXD.parent
    pattern = re.compile(r"^\s*(cdef \w+ )?(READY|QUEUED|IN_STAGE|GROWING|ENDED|HOLD_FRAME)\b.*=|"
                         r"^cdef \w+ (READY|QUEUED|IN_STAGE|GROWING|ENDED)\b", re.M)
    for path in sorted(sim.glob("*.py")) + sorted(sim.glob("*.pxd")):
        if path.stem == "states":
            continue
        assert not pattern.search(path.read_text()), path.name
