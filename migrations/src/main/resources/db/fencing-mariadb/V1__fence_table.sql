-- fencing on MariaDB (InnoDB): the per-resource fence, in the database ${fencingSchema}.
-- ${fencingSchema} is a Flyway placeholder; the Java entry point validates it as a plain identifier.
-- Names and values are ASCII with binary collation: resources compare exactly as on PostgreSQL.

CREATE TABLE `${fencingSchema}`.fence (
    resource      VARCHAR(200) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
    token         BIGINT       NOT NULL CHECK (token > 0),
    lease_id      VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    registered_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)
) ENGINE = InnoDB
  COMMENT = 'fencing: per resource, the token and lease id of the holder registered last. Never goes backwards.';

-- The fence cannot go backwards: no lowering of token, no re-pointing a token to another lease,
-- no renaming of a resource, no DELETE. SQLSTATE ZF002. (TRUNCATE fires no trigger on MariaDB:
-- revoke DROP on the fence database from the application's user instead.)
CREATE TRIGGER `${fencingSchema}`.fence_no_going_back
BEFORE UPDATE ON `${fencingSchema}`.fence
FOR EACH ROW
BEGIN
    IF NEW.resource <> OLD.resource THEN
        SIGNAL SQLSTATE 'ZF002' SET MESSAGE_TEXT = 'a fence row cannot be renamed';
    END IF;
    IF NEW.token < OLD.token THEN
        SIGNAL SQLSTATE 'ZF002' SET MESSAGE_TEXT = 'the fence cannot go backwards';
    END IF;
    IF NEW.token = OLD.token AND NEW.lease_id <> OLD.lease_id THEN
        SIGNAL SQLSTATE 'ZF002' SET MESSAGE_TEXT = 'the fence cannot hand a token to another lease';
    END IF;
END;

CREATE TRIGGER `${fencingSchema}`.fence_no_delete
BEFORE DELETE ON `${fencingSchema}`.fence
FOR EACH ROW
BEGIN
    SIGNAL SQLSTATE 'ZF002' SET MESSAGE_TEXT = 'a fence row cannot be deleted';
END;

-- Raised by a guarded upsert whose duplicate row was written by a newer holder of the resource:
-- an error rather than "0 rows", since with found-rows counting an untouched duplicate reports 1.
CREATE FUNCTION `${fencingSchema}`.fence_refused(resource VARCHAR(200), attempted BIGINT, current_token BIGINT)
RETURNS BIGINT
DETERMINISTIC NO SQL
BEGIN
    DECLARE message VARCHAR(128) DEFAULT LEFT(CONCAT('stale fencing token [resource=', resource,
        ';attempted=', attempted, ';current=', current_token, ']'), 128);
    SIGNAL SQLSTATE 'ZF001' SET MESSAGE_TEXT = message;
    RETURN NULL;
END;

-- The contract version fencing-jdbc checks at its first registration (FenceSchema.CONTRACT_VERSION).
CREATE FUNCTION `${fencingSchema}`.fence_contract()
RETURNS INT
DETERMINISTIC NO SQL
RETURN 3;
