-- Commit history from local clones (python -m ingest git): every commit with the PR it
-- belongs to and the first release that contains it, the release tags, and where each
-- repository's last walk stopped (the next walk starts there). A measurement's version
-- that is a full or abbreviated commit hash resolves through `commits` at query time.

CREATE TABLE commits (
    repo          VARCHAR NOT NULL,          -- OWNER/NAME (origin remote, or --name)
    sha           VARCHAR NOT NULL,          -- 40 hex digits, lower case
    parents       VARCHAR[] NOT NULL,
    author        VARCHAR,
    author_email  VARCHAR,
    authored_at   TIMESTAMP,                 -- UTC
    committed_at  TIMESTAMP NOT NULL,        -- UTC
    summary       VARCHAR NOT NULL,          -- first line of the message
    message       VARCHAR,
    mainline      BOOLEAN NOT NULL,          -- on the first-parent chain of the walked head
    pr_number     BIGINT,                    -- the PR this commit is, or came in with
    pr_via        VARCHAR,                   -- squash "(#N)", merge "Merge pull request #N",
                                             -- branch (a commit of a merged PR's branch)
    picked_from   BIGINT[],                  -- the PRs a cherry-pick names as its originals
    picked_sha    VARCHAR,                   -- "(cherry picked from commit X)"
    first_release VARCHAR                    -- the earliest release tag that contains it
);                                           -- (repo, sha) unique by construction, no index

CREATE TABLE releases (
    repo        VARCHAR NOT NULL,
    tag         VARCHAR NOT NULL,
    sha         VARCHAR NOT NULL,            -- the commit the tag points to (peeled)
    released_at TIMESTAMP NOT NULL           -- tagger date of an annotated tag, else commit date
);

CREATE TABLE git_walks (
    repo      VARCHAR PRIMARY KEY,
    path      VARCHAR NOT NULL,              -- the clone walked last
    head      VARCHAR NOT NULL,              -- the commit the walk started from
    tips      VARCHAR[] NOT NULL,            -- head and release tags: the next walk stops there
    shallow   BOOLEAN NOT NULL,              -- the clone was shallow: older history missing
    walked_at TIMESTAMP NOT NULL
);
