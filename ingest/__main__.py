"""``python -m ingest``: see ingest/cli.py."""

import sys

from ingest.cli import arrow_without_pandas, main

# Guarded: change detection over many points runs in spawned processes, which import this
# module again (as __mp_main__) and must not run the command a second time.
if __name__ == "__main__":
    arrow_without_pandas()
    sys.exit(main())
