-- The store: sources and what was read from them, series and their measurements,
-- phases with milestones, profiler events, IR passes, and what could not be read.
-- Every row read from a document points to its source and line, so any number on
-- screen can show the raw text it came from. No secondary indexes: DuckDB scans
-- columns with zone maps, and ART indexes would slow every bulk append.

CREATE SEQUENCE source_ids START 1;
CREATE SEQUENCE series_ids START 1;
CREATE SEQUENCE phase_ids START 1;

CREATE TABLE sources (
    source_id     BIGINT PRIMARY KEY DEFAULT nextval('source_ids'),
    uri           VARCHAR NOT NULL UNIQUE,   -- path as given, or URL: the document's identity
    content_hash  VARCHAR NOT NULL,          -- sha256 of the bytes: same hash, nothing to do
    parser        VARCHAR NOT NULL,          -- parsers that found something, comma-separated
    kind          VARCHAR NOT NULL,          -- the ingest kind asked for: auto, logs, results...
    reader        VARCHAR NOT NULL,          -- ingest.registry.READER_VERSION that read it
    encoding      VARCHAR,                   -- utf-8, gb18030 (a recorded fallback), utf-16
    project       VARCHAR NOT NULL DEFAULT '',
    url           VARCHAR,                   -- https link to the document, when it has one
    author        VARCHAR,
    title         VARCHAR,
    created_at    TIMESTAMP,                 -- the document's own date
    ingested_at   TIMESTAMP NOT NULL,
    size_bytes    BIGINT NOT NULL,
    n_lines       BIGINT,
    n_measurements BIGINT NOT NULL DEFAULT 0,
    n_problems    BIGINT NOT NULL DEFAULT 0,
    status        VARCHAR NOT NULL           -- ok, partial (some problems), gone (deleted upstream)
);

CREATE TABLE series (
    series_id   BIGINT PRIMARY KEY DEFAULT nextval('series_ids'),
    series_key  VARCHAR NOT NULL UNIQUE,     -- perfboard.model.series_key of the identity
    project     VARCHAR NOT NULL,
    benchmark   VARCHAR NOT NULL,            -- model or op: ernie, op/abs
    task        VARCHAR NOT NULL,            -- inference, training, op-forward, op-backward
    metric      VARCHAR NOT NULL,            -- latency, throughput, gpu_time, ...
    unit        VARCHAR NOT NULL,            -- normalised: ms, samples/s, MB
    direction   VARCHAR NOT NULL CHECK (direction IN ('lower', 'higher')),
    framework   VARCHAR NOT NULL,
    device      VARCHAR NOT NULL,
    params      JSON NOT NULL,               -- canonical JSON: batch_size, seq_len, precision...
    testbed     JSON NOT NULL                -- canonical JSON: cuda, cudnn, image, gcc...
);

CREATE TABLE measurements (
    series_id    BIGINT NOT NULL,
    source_id    BIGINT NOT NULL,
    run          INTEGER NOT NULL,           -- run within the source
    version      VARCHAR,                    -- commit, release, phase row label
    measured_at  TIMESTAMP,                  -- UTC
    value        DOUBLE,                     -- NULL unless status = 'ok'
    status       VARCHAR NOT NULL CHECK (status IN ('ok', 'oom', 'error', 'missing')),
    samples      BIGINT,
    warmup       BIGINT,
    stats        JSON,
    line         BIGINT NOT NULL,            -- 1-based line (or record) in the source
    raw          VARCHAR                     -- the text as written
);

CREATE TABLE phases (
    phase_id     BIGINT PRIMARY KEY DEFAULT nextval('phase_ids'),
    source_id    BIGINT NOT NULL,
    name         VARCHAR NOT NULL,
    project      VARCHAR NOT NULL,
    benchmark    VARCHAR NOT NULL,
    metric       VARCHAR NOT NULL,
    unit         VARCHAR NOT NULL,
    value_header VARCHAR NOT NULL,
    owner        VARCHAR,
    platform     VARCHAR,
    software     VARCHAR,
    baseline     DOUBLE,                     -- the first milestone's value
    target       DOUBLE,                     -- set by the team; NULL until then
    line         BIGINT NOT NULL
);

CREATE TABLE milestones (
    phase_id             BIGINT NOT NULL,
    ordinal              INTEGER NOT NULL,
    label                VARCHAR NOT NULL,
    value                DOUBLE,
    date                 DATE,
    pr_repo              VARCHAR,
    pr_number            BIGINT,
    pr_url               VARCHAR,
    description          VARCHAR,
    reported_speedup_raw VARCHAR,
    reported_reduction   DOUBLE,
    reported_speedup     DOUBLE,
    computed_reduction   DOUBLE,
    computed_speedup     DOUBLE,
    disagrees            BOOLEAN NOT NULL,
    line                 BIGINT NOT NULL,
    raw                  VARCHAR,
    PRIMARY KEY (phase_id, ordinal)
);

CREATE TABLE profile_events (
    source_id  BIGINT NOT NULL,
    run        INTEGER NOT NULL,
    section    VARCHAR NOT NULL,             -- event, memcpy, nvprof
    place      VARCHAR,
    event      VARCHAR NOT NULL,
    thread     VARCHAR,
    depth      INTEGER NOT NULL,
    calls      BIGINT,
    total      DOUBLE,                       -- ms
    cpu_time   DOUBLE,
    cpu_ratio  DOUBLE,
    gpu_time   DOUBLE,
    gpu_ratio  DOUBLE,
    min        DOUBLE,
    max        DOUBLE,
    ave        DOUBLE,
    ratio      DOUBLE,
    line       BIGINT NOT NULL,
    raw        VARCHAR
);

CREATE TABLE passes (
    source_id  BIGINT NOT NULL,
    run        INTEGER NOT NULL,
    name       VARCHAR NOT NULL,
    kind       VARCHAR NOT NULL,             -- ir, analysis
    "order"    INTEGER NOT NULL,
    subgraphs  INTEGER,
    line       BIGINT NOT NULL,
    raw        VARCHAR
);

CREATE TABLE runs (
    source_id  BIGINT NOT NULL,
    run        INTEGER NOT NULL,
    label      VARCHAR,                      -- heading or caption the run sits under
    first_line BIGINT                        -- (source_id, run) is unique by construction;
);                                           -- no key: its index slowed bulk appends

CREATE TABLE ingest_errors (
    source_uri VARCHAR NOT NULL,             -- kept even when the source row is not
    source_id  BIGINT,                       -- NULL when the whole document failed
    parser     VARCHAR,
    line       BIGINT,
    severity   VARCHAR NOT NULL,             -- error, warning
    reason     VARCHAR NOT NULL,
    raw        VARCHAR,
    seen_at    TIMESTAMP NOT NULL
);
