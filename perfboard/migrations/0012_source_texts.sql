-- The text of each small document (issue 16, provenance in one click): a value's line is
-- shown with the lines around it and its table's header, the number marked. Kept for
-- documents up to ingest.documents.KEEP_TEXT_BYTES (comments, PR descriptions, pasted
-- tables, reports); a larger log's lines are read from its file when it is still there.
-- The text as the parsers read it (decoded, line ends "\n", quote markers removed): the
-- line numbers of measurements, problems and milestones count its lines.

CREATE TABLE source_texts (
    source_id  BIGINT NOT NULL,              -- sources.source_id, one row a document
    text       VARCHAR NOT NULL
);
