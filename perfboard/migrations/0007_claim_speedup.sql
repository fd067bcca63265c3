-- A claimed factor ("speed up 2.2x", "加速比 1.97", "nv/paddle 1.31") as written, beside the
-- claimed before/after times and percent: the performance tables of PRs state it more
-- often than either. NULL for claims that state none.

ALTER TABLE claims ADD COLUMN speedup DOUBLE;
