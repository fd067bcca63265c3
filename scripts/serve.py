"""Serve the dashboard: `streamlit run app.py`, with the legacy pages/ mode switched off.

app.py routes with st.navigation. Streamlit also has an older mechanism that turns a
`pages/` folder next to the entry script into pages of their own, and it engages for
the first session of a server until some session runs st.navigation: a deep link like
/phases?phase=1 opened first on a fresh server would run pages/phases.py bare, with the
legacy menu. Switching the mode off before the server starts makes every session go
through app.py.

    python scripts/serve.py [streamlit run options...]
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

from streamlit.runtime.pages_manager import PagesManager
from streamlit.web import cli

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # perfboard, for the warm-up


def warm_up() -> None:
    """perfboard.ui.warm_up once the server's runtime exists: ui's st.cache_data
    functions check their cache settings against the runtime's when they are defined,
    and imported before it they log "No runtime found"."""
    from streamlit import runtime

    deadline = time.monotonic() + 60
    while not runtime.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    from perfboard import db, ui

    ui.warm_up(db.db_path())


def main() -> None:
    PagesManager.uses_pages_directory = False
    # A server keeps the store's DuckDB instance open between queries (perfboard.db.keep_open).
    os.environ.setdefault("PERFBOARD_KEEP_STORE_OPEN", "1")
    threading.Thread(target=warm_up, name="perfboard-warm-up", daemon=True).start()
    sys.argv = ["streamlit", "run", str(ROOT / "app.py"), *sys.argv[1:]]
    cli.main()


if __name__ == "__main__":
    main()
