"""``python -m serq``: the command-line interface (see ``serq.cli``)."""
import sys

from serq.cli import main

if __name__ == "__main__":
    sys.exit(main())
