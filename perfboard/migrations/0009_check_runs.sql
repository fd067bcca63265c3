-- PR checks (python -m perfboard check): each run of the CI gate, kept so that it can be
-- read back and reproduced, and so that a PR's runs can be shown beside the history.
-- The PR's values live here only, never in `measurements`: the main branch's series do
-- not change when a PR is checked. Ids are picked by perfboard/check.py (max + 1 in the
-- run's transaction), not by a sequence: a DuckLake store has none.

CREATE TABLE check_runs (
    check_run_id BIGINT PRIMARY KEY,
    pr_url       VARCHAR,                    -- the PR checked (--pr / --post), if named
    head_sha     VARCHAR,                    -- the PR's head commit (--head-sha), if named
    base_kind    VARCHAR NOT NULL,           -- version, release, date (Compare's side kinds)
    base_value   VARCHAR NOT NULL,           -- the commit, tag or date the baseline is
    base         VARCHAR NOT NULL,           -- which baseline, and why ("merge base ...")
    created_at   TIMESTAMP NOT NULL,         -- UTC
    verdict      VARCHAR NOT NULL CHECK (verdict IN ('passed', 'failed')),
    fail_on      VARCHAR NOT NULL CHECK (fail_on IN ('regression', 'any', 'never')),
    confidence   DOUBLE NOT NULL,
    exit_status  INTEGER NOT NULL,           -- 0 passed, 1 failed (or its post failed)
    comment_url  VARCHAR,                    -- the PR comment it posted or edited
    markdown     VARCHAR NOT NULL            -- the comment as written
);

CREATE TABLE check_results (                 -- one row per series either side held
    check_run_id   BIGINT NOT NULL,
    series_id      BIGINT,                   -- the stored series; NULL for a new one
    series_key     VARCHAR NOT NULL,         -- perfboard.model.series_key of the identity
    project        VARCHAR NOT NULL,         -- the identity, so a new series is known too
    benchmark      VARCHAR NOT NULL,
    task           VARCHAR NOT NULL,
    metric         VARCHAR NOT NULL,
    unit           VARCHAR NOT NULL,
    direction      VARCHAR NOT NULL,
    framework      VARCHAR NOT NULL,
    device         VARCHAR NOT NULL,
    params         JSON NOT NULL,
    testbed        JSON NOT NULL,
    base           DOUBLE,                   -- median of the baseline's values
    pr             DOUBLE,                   -- median of the PR's values
    base_n         BIGINT NOT NULL,
    pr_n           BIGINT NOT NULL,
    change_pct     DOUBLE,
    z              DOUBLE,                   -- the change in units of its noise
    detectable_pct DOUBLE,                   -- the smallest change the check could tell
    min_change_pct DOUBLE,                   -- the minimum effect it was judged with
    verdict        VARCHAR NOT NULL CHECK (verdict IN ('regression', 'improvement',
                   'too noisy to tell', 'gone', 'new', 'unchanged')),
    note           VARCHAR
);
