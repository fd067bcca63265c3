"""Write the demo's recorded GitHub PR answers from what data/samples knows of the PRs.

    python scripts/record_demo_pulls.py [--out data/github] [--check]

One JSON file per repository (data/github/OWNER-NAME-pulls.json), shaped like GitHub's
PR objects, for `python -m ingest github-prs --repo OWNER/NAME --load FILE` (the demo
build). Every value comes from data/samples: pulls-known.csv for number, title, author,
state and creation date, and the two PR descriptions the samples hold for their bodies.
What the samples do not say is null (merged_at, a body, the state of a PR whose state is
not known) or left out (base): see data/github/README.md. --check fails when the files
checked in are not what this script writes.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ingest.pulls import read_pulls_csv  # noqa: E402

SAMPLES = ROOT / "data" / "samples"
PULLS = SAMPLES / "pulls-known.csv"
OUT = ROOT / "data" / "github"
# The PR descriptions in the samples (data/samples/README.md): their text is the body.
DESCRIPTIONS = {
    ("PaddlePaddle/Paddle", 22486): "paddle-pr-22486_2020-02-07_nhzlx_description.md",
    ("PaddlePaddle/Paddle", 22494): "paddle-pr-22494_2020-02-07_nhzlx_description.md",
}


def pull_object(row: dict[str, Any]) -> dict[str, Any]:
    """A PR object as GitHub's API shapes it, holding only what the facts row says."""
    repo, number, state = row["repo"], row["number"], row["state"]
    created = row["created_at"]
    stamp = created.strftime("%Y-%m-%dT%H:%M:%SZ") if isinstance(created, datetime) else None
    description = DESCRIPTIONS.get((repo, number))
    return {
        "number": number,
        "title": row["title"],
        "user": {"login": row["author"]} if row["author"] else None,
        # GitHub's state is open or closed; merged is its own flag. "unknown": both null.
        "state": {"merged": "closed", "unknown": None}.get(state, state),
        "merged": None if state == "unknown" else state == "merged",
        "merged_at": None,  # the samples give no merge times
        "created_at": stamp,
        "updated_at": stamp,  # no later update is known
        "html_url": f"https://github.com/{repo}/pull/{number}",
        "body": (SAMPLES / description).read_text(encoding="utf-8") if description else None,
    }


def render(repo: str, rows: list[dict[str, Any]]) -> str:
    """The file of one repository: its PRs as a JSON array, in number order."""
    pulls = [pull_object(r) for r in sorted(rows, key=lambda r: r["number"]) if r["repo"] == repo]
    return json.dumps(pulls, ensure_ascii=False, indent=2) + "\n"


def recorded_files(out: Path = OUT) -> dict[Path, str]:
    """Each file to write and its text."""
    rows, problems = read_pulls_csv(PULLS)
    if problems:
        raise SystemExit(f"{PULLS}:{problems[0].line}: {problems[0].reason}")
    repos = sorted({str(r["repo"]) for r in rows})
    return {out / f"{repo.replace('/', '-')}-pulls.json": render(repo, rows) for repo in repos}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help="folder to write to")
    parser.add_argument("--check", action="store_true", help="compare, write nothing")
    args = parser.parse_args()
    stale = 0
    for path, text in recorded_files(args.out).items():
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                print(f"{path} is not what {Path(__file__).name} writes", file=sys.stderr)
                stale += 1
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
