-- Incremental detection (perfboard.windows): a series of more than 65,536 points is
-- examined in windows anchored at its first point, and an ingest that only appends to it
-- examines its last windows. It reads the series from the first point of the window
-- before the new points' first: that point's position and key (the order of a series:
-- measured_at NULLS FIRST, source_id, line) are kept here, so that read needs no sort of
-- the whole history. NULL for a series examined whole.
ALTER TABLE series_noise ADD COLUMN tail_start BIGINT;
ALTER TABLE series_noise ADD COLUMN tail_measured_at TIMESTAMP;
ALTER TABLE series_noise ADD COLUMN tail_source_id BIGINT;
ALTER TABLE series_noise ADD COLUMN tail_line BIGINT;
