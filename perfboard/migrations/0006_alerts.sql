-- Change detection (python -m perfboard detect; an ingest runs it for the series it
-- touched): the change points of every series over its whole history, and each series'
-- noise. Both are recomputed at will. Triage (status, note, who set it) is people's work:
-- it lives in its own tables, keyed by the alert's stable key (project and the versions
-- on either side), so re-detection and re-ingest never lose it.

CREATE TABLE series_noise (
    series_id      BIGINT PRIMARY KEY,
    points         BIGINT NOT NULL,          -- ok measurements the detection saw
    level          DOUBLE,                   -- robust level of the latest segment
    cv             DOUBLE,                   -- robust coefficient of variation
    min_effect_pct DOUBLE,                   -- smallest step it can show at the confidence
    too_noisy      BOOLEAN NOT NULL,         -- no alerts from this series
    latest_value   DOUBLE,                   -- the newest ok value, against its own level:
    latest_change_pct DOUBLE,                -- not a change point yet (that needs more
    latest_z       DOUBLE,                   -- points after it), but already outside the
    latest_outlier BOOLEAN NOT NULL,         -- series' noise at the confidence
    detected_at    TIMESTAMP NOT NULL
);

CREATE TABLE change_points (
    series_id      BIGINT NOT NULL,
    alert_key      VARCHAR NOT NULL,         -- the alert it belongs to (several series share one)
    position       BIGINT NOT NULL,          -- index of the first point after the change
    before_version VARCHAR,                  -- the last point before
    after_version  VARCHAR,                  -- the first point after
    before_at      TIMESTAMP,
    after_at       TIMESTAMP,
    before         DOUBLE,                   -- level of the segment before, in the series' unit
    after          DOUBLE,
    change_pct     DOUBLE NOT NULL,
    p_value        DOUBLE NOT NULL,
    kind           VARCHAR NOT NULL CHECK (kind IN ('regression', 'improvement')),
    source_id      BIGINT,                   -- the first measurement after: its provenance
    line           BIGINT
);

CREATE TABLE alert_triage (
    alert_key  VARCHAR PRIMARY KEY,
    status     VARCHAR NOT NULL
               CHECK (status IN ('new', 'acknowledged', 'invalid', 'fixed', 'wontfix')),
    note       VARCHAR,
    set_by     VARCHAR NOT NULL,
    set_at     TIMESTAMP NOT NULL
);

CREATE TABLE alert_triage_log (                -- every change of triage, oldest first
    alert_key  VARCHAR NOT NULL,
    status     VARCHAR NOT NULL,
    note       VARCHAR,
    set_by     VARCHAR NOT NULL,
    set_at     TIMESTAMP NOT NULL
);
