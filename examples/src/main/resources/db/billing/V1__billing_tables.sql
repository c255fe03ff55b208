-- The billing tables of the example application. ${schema} is a Flyway placeholder so that
-- every test (and the demo) can work in its own schema.
--
-- Deliberately NO unique constraint on (customer_id, period) in invoices or charges: the replay
-- counts double charges, so a duplicate must be physically possible. The job avoids duplicates the
-- way the incident's team did: by checking for an existing invoice inside its write transaction.

CREATE TABLE ${schema}.customers (
    id             BIGSERIAL PRIMARY KEY,
    name           TEXT        NOT NULL,
    email          TEXT        NOT NULL,
    active         BOOLEAN     NOT NULL DEFAULT TRUE,
    plan           TEXT        NOT NULL,
    amount_cents   BIGINT      NOT NULL CHECK (amount_cents >= 0),
    billing_period TEXT        NOT NULL DEFAULT 'monthly',
    created_at     TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE ${schema}.invoices (
    id           BIGSERIAL PRIMARY KEY,
    customer_id  BIGINT      NOT NULL REFERENCES ${schema}.customers (id),
    period       TEXT        NOT NULL,
    amount_cents BIGINT      NOT NULL,
    status       TEXT        NOT NULL DEFAULT 'issued',
    run_id       TEXT        NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX invoices_customer_period ON ${schema}.invoices (customer_id, period);

-- The outbox: a charge is a row here; nothing is sent anywhere.
CREATE TABLE ${schema}.charges (
    id           BIGSERIAL PRIMARY KEY,
    invoice_id   BIGINT      NOT NULL REFERENCES ${schema}.invoices (id),
    customer_id  BIGINT      NOT NULL REFERENCES ${schema}.customers (id),
    period       TEXT        NOT NULL,
    amount_cents BIGINT      NOT NULL,
    run_id       TEXT        NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX charges_customer_period ON ${schema}.charges (customer_id, period);
