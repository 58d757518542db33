"""Link errors inside gauges and for unindexed arrays given to functions: the texts (with
positions and carets) recorded from pyserq 0.1.2 on 2026-12-01 (found by differential testing,
tools/drt.py)."""
import pytest

import serq

CASES = [
    ('pool kv[2] { cap 10; }\nstage tx[2] : fifo;\nstage s : fifo;\nworkload { arrive batch(1); session { request; } }\nserver { run tx[0] (1); }\ngauge g = queue(tx[3]);\nrun { horizon 5; }\n',
     '6:17: link error: gauge `g`: stage `tx[3]` is out of range: `tx` has 2 member(s)\n6 | gauge g = queue(tx[3]);\n  |                 ^^'),
    ('pool kv[2] { cap 10; }\nstage tx[2] : fifo;\nstage s : fifo;\nworkload { arrive batch(1); session { request; } }\nserver { run tx[0] (1); }\ngauge g = used(kv);\nrun { horizon 5; }\n',
     '6:11: link error: gauge `g`: pool `kv` is an array; index it\n6 | gauge g = used(kv);\n  |           ^^^^'),
    ('pool kv[2] { cap 10; }\nstage tx[2] : fifo;\nstage s : fifo;\nworkload { arrive batch(1); session { request; } }\nserver { run tx[0] (1); }\ngauge g = foo(s);\nrun { horizon 5; }\n',
     '6:11: link error: gauge `g`: unknown function `foo`\n6 | gauge g = foo(s);\n  |           ^^^'),
    ('pool kv[2] { cap 10; }\nstage tx[2] : fifo;\nstage s : fifo;\nworkload { arrive batch(1); session { request; } }\nserver { run tx[0] (1); }\ngauge g = used(nope);\nrun { horizon 5; }\n',
     '6:16: link error: gauge `g`: unknown pool `nope`\n6 | gauge g = used(nope);\n  |                ^^^^\nhelp: declare this pool or use the name of an existing pool'),
    ('pool kv[2] { cap 10; }\nstage tx[2] : fifo;\nstage s : fifo;\nworkload { arrive batch(1); session { request; } }\nserver { run tx[0] (1); }\ngauge g = min(1);\nrun { horizon 5; }\n',
     '6:11: link error: gauge `g`: `min` takes 2 argument(s), got 1\n6 | gauge g = min(1);\n  |           ^^^'),
    ('pool kv[2] { cap 10; }\nstage tx[2] : fifo;\nstage s : fifo;\nworkload { arrive batch(1); session { request; } }\nserver { run tx[0] (1); }\ngauge g = queue(tx);\nrun { horizon 5; }\n',
     '6:11: link error: gauge `g`: stage `tx` is an array; index it\n6 | gauge g = queue(tx);\n  |           ^^^^^'),
    ('pool kv[2] { cap 10; }\nstage tx[2] : fifo;\nworkload { arrive batch(1); session { request; } }\nserver { observe x = used(kv); observe y = queue(tx); }\nrun { horizon 5; }\n',
     '4:22: link error: pool `kv` is an array; index it\n4 | server { observe x = used(kv); observe y = queue(tx); }\n  |                      ^^^^'),
    ('pool kv[2] { cap 10; }\nstage tx[2] : fifo;\nworkload { arrive batch(1); session { request; } }\nserver { observe z = blocksize(kv); }\nrun { horizon 5; }\n',
     '4:22: link error: pool `kv` is an array; index it\n4 | server { observe z = blocksize(kv); }\n  |                      ^^^^^^^^^'),
]


@pytest.mark.parametrize("source,message", CASES)
def test_link_error_text(source, message):
    with pytest.raises(serq.CompileError) as info:
        serq.compile(source=source)
    assert str(info.value) == message
