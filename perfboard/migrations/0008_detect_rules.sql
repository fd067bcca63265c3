-- Change detection's rules of issue 14. A series too noisy to alert on its own no longer
-- loses its change points: a 30 % step in a noisy series is still a step. The change
-- point says it came from such a series (noisy), and its alert's confidence counts it
-- ten times weaker. The minimum effect each series was judged with (perfboard.toml,
-- settings.py; 1 % unless set) is kept beside its noise: below it, no change point.

ALTER TABLE change_points ADD COLUMN noisy BOOLEAN;
ALTER TABLE series_noise ADD COLUMN min_change_pct DOUBLE;
