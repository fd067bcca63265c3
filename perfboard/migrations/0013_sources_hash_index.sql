-- A document's duplicate is looked up by its content hash before it is stored (ingest.save
-- .prior_state): without an index that is a scan of every source, 0.4 ms a document at
-- 1,000 sources and 4.3 ms at 100,000 (a few years of CI logs and synced comments); with
-- one, 0.4 ms whatever the store's size. DuckDB used it for a lookup of the hash alone,
-- not with the kind and the name compared in the same query, so those are compared
-- after (ingest.save.TWINS_SQL). A lake has no indexes (perfboard.lake).

CREATE INDEX sources_content_hash ON sources (content_hash);
