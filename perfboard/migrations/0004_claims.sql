-- Effects a document claims ("from 10ms to 9.5ms", "by 8%"), kept beside what was
-- measured. A claim belongs to its source; when the source is a PR (its url is a PR's
-- page) the claim is that PR's.

CREATE TABLE claims (
    source_id  BIGINT NOT NULL,
    ordinal    INTEGER NOT NULL,
    before     DOUBLE,                       -- ms
    after      DOUBLE,                       -- ms
    unit       VARCHAR NOT NULL,             -- ms, or % for a relative gain
    percent    DOUBLE,                       -- claimed gain, (before - after) / before in %
    line       BIGINT NOT NULL,
    raw        VARCHAR
);
