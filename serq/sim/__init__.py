"""The interpreter (issue 3). Until it lands, `run` says so with a clear error."""
from serq.errors import SimulationError


def run(program):
    """Run a program: not available yet in this version of serq."""
    raise SimulationError("serq cannot run programs yet: the interpreter is not implemented "
                          "in this version (use `serq ir` to inspect the IR)")
