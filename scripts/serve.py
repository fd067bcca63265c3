"""Serve the dashboard: `streamlit run app.py`, with the legacy pages/ mode switched off.

app.py routes with st.navigation. Streamlit also has an older mechanism that turns a
`pages/` folder next to the entry script into pages of their own, and it engages for
the first session of a server until some session runs st.navigation: a deep link like
/phases?phase=1 opened first on a fresh server would run pages/phases.py bare, with the
legacy menu. Switching the mode off before the server starts makes every session go
through app.py.

The server says it is ready for browsers (/_stcore/health, which the frontend and load
balancers ask before they connect) only once perfboard.ui.warm_up has read what every page
starts from, or after PERFBOARD_WARM_UP_SECONDS (120): the first sessions of a fresh server
then find those reads cached instead of all waiting on them at once. The same thread then
looks at the store every second and, after each ingest, reads again those of the reads that
the ingest changed (perfboard.ui.keep_warm).

    python scripts/serve.py [streamlit run options...]
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.runtime import Runtime
from streamlit.web import cli

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # perfboard, for the warm-up


WARMED = threading.Event()
WARM_UP_SECONDS = float(os.environ.get("PERFBOARD_WARM_UP_SECONDS") or 120)
KEEP_WARM_SECONDS = 1.0  # how often the store is looked at for a new ingest (one stat)


def warm_up() -> None:
    """perfboard.ui.warm_up once the server's runtime exists: ui's st.cache_data
    functions check their cache settings against the runtime's when they are defined,
    and imported before it they log "No runtime found"."""
    from streamlit import runtime

    deadline = time.monotonic() + 60
    while not runtime.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        from perfboard import db, drawing, ui

        path = db.db_path()
        seen = db.data_version(path) if db.exists(path) else None  # before the reads
        if not ui.warm_up(path):
            seen = None
        drawing.start()  # the report's charts drawn without holding the server's GIL
        if seen is not None:
            ui.warm_report(path)
    finally:
        WARMED.set()
    while True:  # and after each ingest, before the pages ask (ui.keep_warm)
        time.sleep(KEEP_WARM_SECONDS)
        seen = ui.keep_warm(path, seen)


def ready_once_warm(started: float) -> None:
    """Streamlit's readiness (Runtime.is_ready_for_browser_connection, what
    /_stcore/health answers), and perfboard's: warmed up, or past the deadline."""
    streamlit_ready = Runtime.is_ready_for_browser_connection.fget

    async def ready(runtime: Runtime) -> tuple[bool, str]:
        ok, message = await streamlit_ready(runtime)
        if ok and not WARMED.is_set() and time.monotonic() - started < WARM_UP_SECONDS:
            return False, "warming up"
        return ok, message

    Runtime.is_ready_for_browser_connection = property(ready)  # type: ignore[method-assign]


def main() -> None:
    PagesManager.uses_pages_directory = False
    # A server keeps the store's DuckDB instance open between queries (perfboard.db.keep_open).
    os.environ.setdefault("PERFBOARD_KEEP_STORE_OPEN", "1")
    ready_once_warm(time.monotonic())
    threading.Thread(target=warm_up, name="perfboard-warm-up", daemon=True).start()
    sys.argv = ["streamlit", "run", str(ROOT / "app.py"), *sys.argv[1:]]
    cli.main()


if __name__ == "__main__":
    main()
