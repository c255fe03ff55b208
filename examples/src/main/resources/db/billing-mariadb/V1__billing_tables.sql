-- The billing tables of the example application on MariaDB (InnoDB): the same tables, columns and
-- indexes as db/billing for PostgreSQL. ${schema} is a Flyway placeholder: the billing "schema" is
-- a MariaDB database, so every test (and the demo) can work in its own.
--
-- Deliberately NO unique constraint on (customer_id, period) in invoices or charges: the replay
-- counts double charges, so a duplicate must be physically possible.

CREATE TABLE ${schema}.customers (
    id             BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
    name           VARCHAR(200) NOT NULL,
    email          VARCHAR(200) NOT NULL,
    active         BOOLEAN      NOT NULL DEFAULT TRUE,
    plan           VARCHAR(20)  NOT NULL,
    amount_cents   BIGINT       NOT NULL CHECK (amount_cents >= 0),
    billing_period VARCHAR(20)  NOT NULL DEFAULT 'monthly',
    created_at     TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

CREATE TABLE ${schema}.invoices (
    id           BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
    customer_id  BIGINT       NOT NULL,
    period       VARCHAR(20)  NOT NULL,
    amount_cents BIGINT       NOT NULL,
    status       VARCHAR(20)  NOT NULL DEFAULT 'issued',
    run_id       VARCHAR(100) NOT NULL,
    created_at   TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    FOREIGN KEY (customer_id) REFERENCES ${schema}.customers (id),
    INDEX invoices_customer_period (customer_id, period)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- The outbox: a charge is a row here; nothing is sent anywhere.
CREATE TABLE ${schema}.charges (
    id           BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
    invoice_id   BIGINT       NOT NULL,
    customer_id  BIGINT       NOT NULL,
    period       VARCHAR(20)  NOT NULL,
    amount_cents BIGINT       NOT NULL,
    run_id       VARCHAR(100) NOT NULL,
    created_at   TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    FOREIGN KEY (invoice_id) REFERENCES ${schema}.invoices (id),
    FOREIGN KEY (customer_id) REFERENCES ${schema}.customers (id),
    INDEX charges_customer_period (customer_id, period)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;
