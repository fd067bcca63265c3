"""Request counts and times of the PR sync against the loopback fake GitHub.

    python scripts/bench_github.py [--prs 2500] [--referenced 40]

Goals (issue 4): a first --all sync of 2,500 PRs costs 25 list requests; a second with
nothing changed costs 1 request answered 304; a sync after 3 PRs changed costs 1 list
request; --referenced for 40 PRs costs at most 40 requests the first time and 40
requests answered 304 the next.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ingest import github  # noqa: E402
from perfboard import db, github_api  # noqa: E402
from tests.github_fake import FakeGitHub  # noqa: E402

REPO = "PaddlePaddle/Paddle"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--prs", type=int, default=2500)
    parser.add_argument("--referenced", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, FakeGitHub(token="t" * 40) as fake:
        conn = db.connect(Path(folder) / "bench.duckdb")
        for number in range(1, args.prs + 1):
            fake.add_pull(REPO, number, title=f"change {number}")

        def sync(label: str, run) -> None:  # type: ignore[no-untyped-def]
            client = github_api.GitHubClient(
                fake.base_url, token="t" * 40, cache=github_api.DuckDBCache(conn)
            )
            started = time.perf_counter()
            result = run(client)
            print(
                f"{label:<34} {result.requests:>4} requests ({result.not_modified} answered 304),"
                f" {result.stored:>5} PRs stored, {time.perf_counter() - started:5.2f} s"
            )

        sync(f"--all, first ({args.prs} PRs)", lambda c: github.sync_all(conn, c, REPO))
        sync("--all, nothing changed", lambda c: github.sync_all(conn, c, REPO))
        for number in (11, 1200, 2400):
            fake.update_pull(REPO, number, title=f"change {number}, revised")
        sync("--all, after 3 PRs changed", lambda c: github.sync_all(conn, c, REPO))

        conn.execute("DELETE FROM pull_requests")
        conn.execute("DELETE FROM http_cache")
        conn.execute(
            "INSERT INTO pull_requests (repo, number, origin, synced_at)"
            " SELECT ?, n, 'facts', now() FROM range(1, ? + 1) t(n)",
            [REPO, args.referenced],
        )
        sync(
            f"--referenced, first ({args.referenced} PRs)",
            lambda c: github.sync_referenced(conn, c, REPO),
        )
        sync("--referenced, again", lambda c: github.sync_referenced(conn, c, REPO))
        conn.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
