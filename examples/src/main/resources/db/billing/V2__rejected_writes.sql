-- Not part of the billing application: the replay's record of writes the database refused.
-- When a fenced write fails with SQLSTATE ZF001 (stale fencing token, raised by the fence check in
-- PostgreSQL), the replay inserts one row here, in its own transaction, with the resource and
-- tokens the database reported. The replay's "stale writes rejected" column counts these rows.
CREATE TABLE ${schema}.rejected_writes (
    id              BIGSERIAL PRIMARY KEY,
    period          TEXT        NOT NULL,
    run_id          TEXT        NOT NULL,
    customer_id     BIGINT      NOT NULL,
    sqlstate        TEXT        NOT NULL,
    resource        TEXT,
    attempted_token BIGINT,
    current_token   BIGINT,
    rejected_by     TEXT        NOT NULL CHECK (rejected_by IN ('database', 'client')),
    message         TEXT        NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
);
