-- TEMPORARY: the fence_token column will come from the fencing migrations module (it adds it to
-- any table the user names). Until that is wired in, the example adds it itself so that the DAOs
-- can be written against it. When switching, delete this file and call the library's migration
-- for customers, invoices and charges instead.
ALTER TABLE ${schema}.customers ADD COLUMN fence_token BIGINT NOT NULL DEFAULT 0;
ALTER TABLE ${schema}.invoices  ADD COLUMN fence_token BIGINT NOT NULL DEFAULT 0;
ALTER TABLE ${schema}.charges   ADD COLUMN fence_token BIGINT NOT NULL DEFAULT 0;
