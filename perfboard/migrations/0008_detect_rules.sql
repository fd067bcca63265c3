-- Change detection's rules of issue 14. A series too noisy to alert on its own no longer
-- loses its change points: a 30 % step in a noisy series is still a step. The change
-- point says it came from such a series (noisy), and its alert's confidence counts it
-- ten times weaker. The minimum effect each series was judged with (perfboard.toml,
-- settings.py; 1 % unless set) is kept beside its noise: below it, no change point.

ALTER TABLE change_points ADD COLUMN noisy BOOLEAN;
-- A gradual change is one finding, not a staircase: shape 'drift', from position (the
-- ramp's first point) to end_position (the first point at the level it reached);
-- 'step' (or NULL, stored before) for an abrupt change at position.
ALTER TABLE change_points ADD COLUMN shape VARCHAR;
ALTER TABLE change_points ADD COLUMN end_position BIGINT;
ALTER TABLE series_noise ADD COLUMN min_change_pct DOUBLE;
