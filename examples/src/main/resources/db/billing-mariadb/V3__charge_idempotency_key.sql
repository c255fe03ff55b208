-- The idempotency key of a charge, as in db/billing: a retry of a charge that did commit (its
-- reply was lost) fails on this unique index instead of charging twice. NULL keys are not
-- constrained.
ALTER TABLE ${schema}.charges
    ADD COLUMN idempotency_key VARCHAR(200) NULL,
    ADD UNIQUE INDEX charges_idempotency_key (idempotency_key);
