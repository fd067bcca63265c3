"""Build the demo database from the real documents bundled in data/samples, and a
simulated nightly history (data/simulated) to show the pages that need one.

    python scripts/build_demo_db.py [--db data/perfboard.duckdb] [--force]

Builds into a temporary file and moves it into place at the end, so a dashboard that is
already running never sees a half-built database. Does nothing when the database exists
(unless --force): `make run` calls it on every start.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ingest.cli import MANIFEST  # noqa: E402
from ingest.cli import main as ingest_main  # noqa: E402
from perfboard import db  # noqa: E402

SAMPLES = ROOT / "data" / "samples"
# Made up, and labelled so on every series (scripts/make_demo_history.py writes it).
SIMULATED = ROOT / "data" / "simulated" / "ernie-p4-nightly.jsonl"
# What is known of the PRs the documents cite, as recorded GitHub answers
# (scripts/record_demo_pulls.py writes them from data/samples/pulls-known.csv).
RECORDED = {
    "PaddlePaddle/Paddle": ROOT / "data" / "github" / "PaddlePaddle-Paddle-pulls.json",
    "PaddlePaddle/benchmark": ROOT / "data" / "github" / "PaddlePaddle-benchmark-pulls.json",
}


def demo_documents() -> list[str]:
    """The documents the manifest lists (pulls-known.csv is PR facts, not a document),
    as paths relative to the repository: a source's name should not depend on the clone."""
    with open(SAMPLES / MANIFEST, encoding="utf-8", newline="") as fh:
        return [str((SAMPLES / row["file"]).relative_to(ROOT)) for row in csv.DictReader(fh)]


def build(target: Path, force: bool = False) -> int:
    if target.exists() and not force:
        # Kept, but brought up to this code's schema: a store made by an older perfboard
        # would otherwise meet queries for tables it does not have.
        conn = db.connect(target)
        applied = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()[0]
        conn.close()
        print(f"{target} exists (schema {applied}); keeping it (--force rebuilds)", file=sys.stderr)
        return 0
    tmp = target.with_name(target.name + ".tmp")
    for stale in (tmp, tmp.with_name(tmp.name + ".wal")):
        stale.unlink(missing_ok=True)
    with contextlib.chdir(ROOT):  # sources are named relative to the repository
        status = ingest_main(["auto", *demo_documents(), "--db", str(tmp.resolve()), "--quiet"])
        # After the documents: a PR body that is the text of a sample description is then
        # a duplicate of that file, and its claims keep the file as their source.
        for repo, recorded in RECORDED.items():
            if status == 0:
                load = ["--load", str(recorded.relative_to(ROOT)), "--db", str(tmp.resolve())]
                status = ingest_main(["github-prs", "--repo", repo, *load])
        # Last, the simulated nightly history (data/simulated/README.md): its ingest runs
        # change detection, so Alerts, Explain and Compare have findings to show.
        if status == 0:
            history = str(SIMULATED.relative_to(ROOT))
            status = ingest_main(["results", history, "--db", str(tmp.resolve()), "--quiet"])
    if status != 0:
        print(
            f"demo build failed (ingest exit status {status}); {target} untouched", file=sys.stderr
        )
        return status
    os.replace(tmp, target)
    print(f"built {target}", file=sys.stderr)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, default=ROOT / "data" / "perfboard.duckdb")
    parser.add_argument("--force", action="store_true", help="rebuild even if it exists")
    args = parser.parse_args()
    return build(args.db, args.force)


if __name__ == "__main__":
    sys.exit(main())
