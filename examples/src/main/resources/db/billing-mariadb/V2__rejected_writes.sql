-- Not part of the billing application: the replay's record of writes the database refused (see
-- db/billing/V2 for PostgreSQL). On MariaDB the fenced writes are guarded statements: a stale one
-- is refused by the fence check inside the statement and reported as StaleTokenException (ZF001).
-- `sqlstate` is a reserved word on MariaDB: quoted wherever it is named.
CREATE TABLE ${schema}.rejected_writes (
    id              BIGINT        NOT NULL AUTO_INCREMENT PRIMARY KEY,
    period          VARCHAR(20)   NOT NULL,
    run_id          VARCHAR(100)  NOT NULL,
    customer_id     BIGINT        NOT NULL,
    `sqlstate`      VARCHAR(5)    NOT NULL,
    resource        VARCHAR(200),
    attempted_token BIGINT,
    current_token   BIGINT,
    rejected_by     VARCHAR(10)   NOT NULL CHECK (rejected_by IN ('database', 'client')),
    message         TEXT          NOT NULL,
    created_at      TIMESTAMP(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;
