"""``python -m ingest``: see ingest/cli.py."""

import gc
import sys

# The imports below (DuckDB, Arrow, numpy, the parsers) allocate some hundred thousand
# objects and make no garbage: the cycle collector, run every 700 allocations, only
# walks them over and over, 10 ms of a small document's 0.33 s (issue 15's part g).
# Once made they are frozen (moved out of the collector's sight: they live as long as
# the command) and the collector runs as usual from there on.
gc.disable()
from ingest.cli import arrow_without_pandas, keep_freed_memory, main  # noqa: E402
from ingest.save import freeze_for_life  # noqa: E402

freeze_for_life()
gc.enable()

# Guarded: change detection over many points runs in spawned processes, which import this
# module again (as __mp_main__) and must not run the command a second time.
if __name__ == "__main__":
    keep_freed_memory()
    arrow_without_pandas()
    sys.exit(main())
