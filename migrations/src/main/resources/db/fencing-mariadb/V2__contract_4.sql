-- fencing: contract 4. PostgreSQL gained the fence epoch (its WAL timeline) in contract 4; MariaDB
-- has no timeline, so its fence is unchanged and only the contract version moves with the library.

DROP FUNCTION `${fencingSchema}`.fence_contract;

CREATE FUNCTION `${fencingSchema}`.fence_contract()
RETURNS INT
DETERMINISTIC NO SQL
RETURN 4;
