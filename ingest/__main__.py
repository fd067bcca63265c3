"""``python -m ingest``: see ingest/cli.py."""

import sys

from ingest.cli import main

sys.exit(main())
