-- What each commit changed (issue 16): the dashboard keeps its cached query results until
-- something they read changes, rather than until anything does. Written by db.transaction
-- inside the writer's own transaction, so it is true exactly when the rows are; read by
-- perfboard/result_cache.py (StoreVersions) only when the file's stat moved.
--
-- One row per table a commit wrote; the rows of one commit share its seq. A commit that
-- did not say what it wrote is one row with table_name '*' (everything changed).

CREATE TABLE data_changes (
    seq          BIGINT NOT NULL,            -- one a commit, rising (the largest + 1)
    committed_at TIMESTAMP NOT NULL,
    table_name   VARCHAR NOT NULL,           -- a table the commit wrote, or '*'
    projects     VARCHAR[],                  -- the projects whose rows changed; NULL: any
    series_ids   BIGINT[]                    -- the series whose rows changed (in this table,
                                             -- or rows of it that theirs join); NULL: any
);
