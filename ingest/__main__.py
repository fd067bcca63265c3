"""``python -m ingest``: see ingest/cli.py."""

import sys

from ingest.cli import arrow_without_pandas, main

arrow_without_pandas()
sys.exit(main())
