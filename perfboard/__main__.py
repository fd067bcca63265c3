"""``python -m perfboard``: see perfboard/cli.py."""

import sys

from perfboard.cli import main

if __name__ == "__main__":
    sys.exit(main())
