"""Time `python -m ingest git` on a generated repository of 50,000 commits.

    python scripts/bench_git.py [--commits 50000] [--repeat 3] [--keep DIR]

Goal (issue 4): the walk finishes in under 30 s on this machine. The repository is
written by `git fast-import` in PaddlePaddle's habits: squash merges "Title (#N)" on the
mainline, every tenth change a "Merge pull request #N" of a two-commit branch, every
hundredth a cherry-pick onto a release branch, a release tag every 2,500 commits. Each
run is a whole command in a fresh process on a fresh store (process start included);
then an unchanged re-walk and a re-walk after 100 new commits.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
T0 = 1_546_300_800  # 2019-01-01


def fast_import_stream(commits: int) -> bytes:
    """A fast-import stream of `commits` commits (branch commits and merges counted)."""
    out: list[bytes] = []
    mark = 0
    made = 0
    mainline: int | None = None
    release_tip: int | None = None

    def commit(ref: str, message: str, parents: list[int], path: str) -> int:
        nonlocal mark, made
        mark += 1
        made += 1
        when = T0 + made * 600
        body = message.encode()
        content = f"{made}\n".encode()
        lines = [
            f"commit {ref}\nmark :{mark}\n".encode(),
            f"author Dev{made % 97} <dev{made % 97}@example.com> {when} +0800\n".encode(),
            f"committer Dev{made % 97} <dev{made % 97}@example.com> {when} +0800\n".encode(),
            f"data {len(body)}\n".encode() + body + b"\n",
        ]
        if parents:
            lines.append(f"from :{parents[0]}\n".encode())
        lines += [f"merge :{p}\n".encode() for p in parents[1:]]
        lines.append(f"M 100644 inline {path}\ndata {len(content)}\n".encode() + content + b"\n")
        out.extend(lines)
        return mark

    pr = 10_000
    release = 0
    while made < commits:
        pr += 1
        parents = [mainline] if mainline else []
        if pr % 10 == 0 and mainline:  # a branch of two commits, merged
            first = commit("refs/heads/feature", "work in progress", [mainline], "branch.txt")
            tip = commit("refs/heads/feature", "fix test=develop", [first], "branch.txt")
            mainline = commit(
                "refs/heads/develop",
                f"Merge pull request #{pr} from dev/feature-{pr}\n\nOptimize op {pr}",
                [mainline, tip],
                "code.txt",
            )
        else:
            mainline = commit(
                "refs/heads/develop", f"Optimize op {pr} (#{pr})", parents, "code.txt"
            )
        if pr % 100 == 0:
            pr += 1
            release_tip = commit(
                "refs/heads/release",
                f"[cherry-pick] Optimize op {pr - 1} (#{pr - 1}) (#{pr})",
                [release_tip or mainline],
                "release.txt",
            )
        if made // 2500 > release:
            release = made // 2500
            out.append(f"reset refs/tags/v1.{release}.0\nfrom :{mainline}\n\n".encode())
            if release_tip:  # and a patch release on the release branch
                out.append(f"reset refs/tags/v1.{release - 1}.1\nfrom :{release_tip}\n\n".encode())
    out.append(b"done\n")
    return b"".join(out)


def make_repo(folder: Path, commits: int) -> Path:
    repo = folder / "paddle"
    subprocess.run(["git", "init", "-q", "-b", "develop", str(repo)], check=True)
    subprocess.run(
        ["git", "fast-import", "--quiet", "--done"],
        cwd=repo,
        input=fast_import_stream(commits),
        check=True,
    )
    subprocess.run(["git", "reset", "-q", "--hard", "develop"], cwd=repo, check=True)
    return repo


def add_commits(repo: Path, n: int) -> None:
    for i in range(n):
        (repo / "code.txt").write_text(f"new {i}\n")
        subprocess.run(["git", "add", "code.txt"], cwd=repo, check=True)
        subprocess.run(
            [
                "git",
                "-c",
                "user.name=Dev",
                "-c",
                "user.email=d@e",
                "commit",
                "-qm",
                f"New change {i} (#{90_000 + i})",
            ],
            cwd=repo,
            check=True,
        )


def timed_walk(repo: Path, store: Path) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(
        [
            PYTHON,
            "-m",
            "ingest",
            "git",
            "--repo",
            str(repo),
            "--name",
            "bench/paddle",
            "--db",
            str(store),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return time.perf_counter() - started, done.stderr.strip().splitlines()[-1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--commits", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="build the repository here and keep it")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        repo = make_repo(folder, args.commits)
        count = subprocess.run(
            ["git", "rev-list", "--all", "--count"], cwd=repo, capture_output=True, text=True
        ).stdout.strip()
        print(f"repository: {count} commits in {time.perf_counter() - started:.1f} s")
        firsts = []
        for i in range(args.repeat):
            store = Path(tmp) / f"walk{i}.duckdb"
            seconds, said = timed_walk(repo, store)
            firsts.append(seconds)
            print(f"first walk {i + 1}: {seconds:6.2f} s  | {said}")
        unchanged, said = timed_walk(repo, store)
        print(f"unchanged re-walk: {unchanged:6.2f} s  | {said}")
        add_commits(repo, 100)
        more, said = timed_walk(repo, store)
        print(f"after 100 commits: {more:6.2f} s  | {said}")
        median = statistics.median(firsts)
        print(f"median first walk of {count} commits: {median:.2f} s (goal < 30 s)")
        return 0 if median < 30 else 1


if __name__ == "__main__":
    sys.exit(main())
