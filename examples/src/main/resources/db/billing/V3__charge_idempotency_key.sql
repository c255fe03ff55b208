-- The idempotency key of a charge: the job names each charge it makes (run, customer, period), and
-- a retry of that charge carries the same name. A retry whose first attempt did commit (its reply
-- was lost) then fails on this unique index instead of charging twice. The fence cannot catch that
-- retry: both attempts come from the current holder. Charges written without a key (NULL) are not
-- constrained, so the replay's unlocked modes can still double-charge across runs.
ALTER TABLE ${schema}.charges ADD COLUMN idempotency_key TEXT;
CREATE UNIQUE INDEX charges_idempotency_key ON ${schema}.charges (idempotency_key);
