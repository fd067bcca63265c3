-- Pull requests the data refers to: what is known of them, from GitHub or from a file of
-- known facts (data/samples/pulls-known.csv). One row per (repo, number); a later sync
-- replaces it.

CREATE TABLE pull_requests (
    repo          VARCHAR NOT NULL,          -- OWNER/NAME
    number        BIGINT NOT NULL,
    title         VARCHAR,
    author        VARCHAR,
    state         VARCHAR,                   -- open, closed, merged, unknown
    created_at    TIMESTAMP,
    merged_at     TIMESTAMP,
    closed_at     TIMESTAMP,
    labels        JSON,
    base          VARCHAR,
    merge_commit  VARCHAR,
    additions     BIGINT,
    deletions     BIGINT,
    url           VARCHAR,
    body          VARCHAR,
    note          VARCHAR,                   -- what a facts file says beside the fields
    origin        VARCHAR NOT NULL,          -- the file or API it came from
    synced_at     TIMESTAMP NOT NULL,
    PRIMARY KEY (repo, number)
);
