"""``python -m serq``: the command-line interface (see ``serq.cli``), through the same entry
point as the ``serq`` command (``serq.entry``: Ctrl-C handled from the start)."""
import sys

from serq.entry import main

if __name__ == "__main__":
    sys.exit(main())
