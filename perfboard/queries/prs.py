"""Pull requests the data refers to, what they measured and what they claim."""

from __future__ import annotations

import duckdb
import pandas as pd

from perfboard.queries.labels import MILESTONE_STEPS, SERIES_LABEL


def referenced_prs(conn: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Every PR the data refers to: those a milestone names, with the step it made (before
    -> after), those known from a PR facts file or a sync, with what is known of them, and
    those whose page is a stored document that measured or claimed something."""
    return conn.execute(
        rf"""
        WITH steps AS ({MILESTONE_STEPS}),
        named AS (SELECT * FROM steps WHERE pr_number IS NOT NULL),
        known AS (
        SELECT coalesce(n.pr_repo, k.repo) AS pr_repo,
               coalesce(n.pr_number, k.number) AS pr_number,
               n.pr_url, k.title, k.author, k.state, n.project, n.phase, n.phase_id,
               n.label AS milestone, n.before, n.value AS after, n.unit,
               (n.before - n.value) / n.before AS reduction,
               n.reported_speedup_raw AS reported, n.disagrees, n.description,
               coalesce(n.date, k.created_at::DATE) AS date, k.note,
               n.pr_number IS NULL AS unnamed
        FROM named n
        FULL OUTER JOIN pull_requests k
          ON k.number = n.pr_number AND (n.pr_repo IS NULL OR k.repo = n.pr_repo)
        ),
        -- PR pages stored as documents (a description with a before/after table): a PR the
        -- data refers to even when no phase table names it and no sync knows it.
        documented AS (
            SELECT regexp_extract(url, 'https://[^/]+/([^/]+/[^/]+)/pull/\d+', 1) AS pr_repo,
                   regexp_extract(url, '/pull/(\d+)', 1)::BIGINT AS pr_number,
                   min(url) AS pr_url, min(nullif(title, '')) AS title,
                   min(nullif(author, '')) AS author, min(nullif(project, '')) AS project,
                   min(created_at)::DATE AS date, true AS unnamed
            FROM sources
            WHERE regexp_matches(url, '/pull/\d+/?$')
              AND (n_measurements > 0 OR source_id IN (SELECT source_id FROM claims))
            GROUP BY ALL
        )
        SELECT * EXCLUDE (unnamed) FROM (
            SELECT * FROM known
            UNION ALL BY NAME
            SELECT d.* FROM documented d
            WHERE NOT EXISTS (SELECT 1 FROM known k
                              WHERE k.pr_number = d.pr_number
                                AND (k.pr_repo IS NULL OR k.pr_repo = d.pr_repo))
        )
        -- the PRs a phase table names first: each is a step of a phase
        ORDER BY unnamed, date DESC NULLS LAST, pr_number DESC
        """
    ).df()


def pr_measurements(
    conn: duckdb.DuckDBPyConnection, repo: str | None, number: int, limit: int = 500
) -> pd.DataFrame:
    """Measurements taken at a PR's merge commit (their version is its full or short hash),
    each with its series' project and label (SERIES_LABEL)."""
    return conn.execute(
        f"""
        SELECT s.project, {SERIES_LABEL} AS series, m.value, s.unit, m.status, m.version,
               m.measured_at, src.uri AS source, m.line, m.source_id
        FROM pull_requests k
        JOIN measurements m
          ON length(m.version) >= 7 AND starts_with(k.merge_commit, lower(m.version))
        JOIN series s USING (series_id)
        JOIN sources src USING (source_id)
        WHERE k.number = $number AND ($repo IS NULL OR k.repo = $repo)
        ORDER BY s.project, s.benchmark, s.metric
        LIMIT $limit
        """,
        {"repo": repo, "number": number, "limit": limit},
    ).df()


def pr_page_measurements(
    conn: duckdb.DuckDBPyConnection, repo: str | None, number: int, limit: int = 500
) -> pd.DataFrame:
    """What the PR's own page measured: the measurements of stored documents whose url is
    the PR (its description, or a comment of it), such as a before/after table, each with
    its series' label (SERIES_LABEL) and the line it was read from."""
    return conn.execute(
        rf"""
        SELECT {SERIES_LABEL} AS series, s.params->>'variant' AS variant, m.value, s.unit,
               m.status, src.uri AS source, m.line, m.raw, m.source_id
        FROM sources src
        JOIN measurements m USING (source_id)
        JOIN series s USING (series_id)
        WHERE regexp_extract(src.url, '^https://[^/]+/[^/]+/[^/]+/pull/(\d+)', 1) = $number
          AND ($repo IS NULL
               OR regexp_extract(src.url, '^https://[^/]+/([^/]+/[^/]+)/pull/', 1) = $repo)
        ORDER BY src.uri, m.line, s.metric
        LIMIT $limit
        """,
        {"repo": repo, "number": str(number), "limit": limit},
    ).df()


def pr_claims(conn: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Effects claimed by documents that are PR pages (their url ends in /pull/N).

    A PR's description may be in the store twice (a file whose url is the PR's page, and
    the body a GitHub sync read): each distinct claim of a PR is given once, with the
    first source (by name) that makes it, and its line there (source_id, line).
    """
    return conn.execute(
        """
        WITH claimed AS (
            SELECT regexp_extract(src.url, 'https://[^/]+/([^/]+/[^/]+)/pull/\\d+', 1)
                       AS pr_repo,
                   regexp_extract(src.url, '/pull/(\\d+)', 1)::BIGINT AS pr_number,
                   c.before, c.after, c.unit, c.percent, c.speedup, c.raw, src.uri AS source,
                   c.source_id, c.line,
                   c.ordinal
            FROM claims c JOIN sources src USING (source_id)
            WHERE regexp_matches(src.url, '/pull/\\d+/?$')
        )
        SELECT * EXCLUDE (ordinal) FROM claimed
        QUALIFY row_number() OVER (
            PARTITION BY pr_repo, pr_number, before, after, unit, percent, speedup
            ORDER BY source, ordinal) = 1
        ORDER BY pr_number, source, ordinal
        """
    ).df()
