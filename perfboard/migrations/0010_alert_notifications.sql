-- Alerts that reach people (issue 17). Every notification tried about an alert, one row
-- per alert, channel (slack, feishu, dingtalk, wecom, email) and try: a failed send is
-- kept with its error and tried again on the next run; once one is sent (ok), that
-- channel never hears of the alert again. Keyed by the alert's stable key, as its triage
-- is, so re-detection and re-ingest never notify twice (perfboard/notify.py).

CREATE TABLE alert_notifications (
    alert_key  VARCHAR NOT NULL,
    channel    VARCHAR NOT NULL,
    sent_at    TIMESTAMP NOT NULL,           -- when it was tried
    ok         BOOLEAN NOT NULL,             -- the vendor said it was delivered
    error      VARCHAR                       -- what went wrong, when not ok (never a URL)
);

-- The GitHub issue filed from an alert (perfboard/alert_issue.py): one per alert.
CREATE TABLE alert_issues (
    alert_key  VARCHAR PRIMARY KEY,
    repo       VARCHAR NOT NULL,             -- OWNER/REPO
    number     BIGINT NOT NULL,
    url        VARCHAR NOT NULL,             -- the issue's html_url
    filed_by   VARCHAR NOT NULL,
    filed_at   TIMESTAMP NOT NULL
);
