-- The GitHub sync: each PR's updated_at (the watermark of an incremental --all sync),
-- and the ETag and body of every GET it made, so the next sync can ask
-- If-None-Match and reuse the stored body on 304 (which costs no rate limit).

ALTER TABLE pull_requests ADD COLUMN updated_at TIMESTAMP;

CREATE TABLE http_cache (
    url        VARCHAR PRIMARY KEY,          -- the full URL asked, query included
    etag       VARCHAR NOT NULL,
    body       VARCHAR NOT NULL,             -- the JSON text answered with that ETag
    fetched_at TIMESTAMP NOT NULL
);
