-- fencing: the per-resource fence.
-- ${fencingSchema} is a Flyway placeholder; the Java entry point validates it as a plain identifier.

CREATE TABLE "${fencingSchema}".fence (
    resource      text        PRIMARY KEY,
    token         bigint      NOT NULL CHECK (token > 0),
    lease_id      text        NOT NULL,
    registered_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE "${fencingSchema}".fence IS
    'fencing: per resource, the token and lease id of the holder registered last. Never goes backwards.';

-- The fence cannot go backwards: no lowering of token, no re-pointing a token to another lease,
-- no renaming of a resource, no DELETE, no TRUNCATE. SQLSTATE ZF002.
CREATE FUNCTION "${fencingSchema}".fence_guard() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        IF NEW.resource IS DISTINCT FROM OLD.resource THEN
            RAISE EXCEPTION USING
                ERRCODE = 'ZF002',
                MESSAGE = format('fence row for resource "%s" cannot be renamed', OLD.resource),
                DETAIL = format('resource=%s;attempted=%s;current=%s', OLD.resource, NEW.token, OLD.token);
        END IF;
        IF NEW.token < OLD.token THEN
            RAISE EXCEPTION USING
                ERRCODE = 'ZF002',
                MESSAGE = format('fence for resource "%s" cannot go backwards: attempted %s, current %s',
                                 OLD.resource, NEW.token, OLD.token),
                DETAIL = format('resource=%s;attempted=%s;current=%s', OLD.resource, NEW.token, OLD.token);
        END IF;
        IF NEW.token = OLD.token AND NEW.lease_id IS DISTINCT FROM OLD.lease_id THEN
            RAISE EXCEPTION USING
                ERRCODE = 'ZF002',
                MESSAGE = format('fence for resource "%s" cannot hand token %s to another lease',
                                 OLD.resource, OLD.token),
                DETAIL = format('resource=%s;attempted=%s;current=%s', OLD.resource, NEW.token, OLD.token);
        END IF;
        RETURN NEW;
    ELSIF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION USING
            ERRCODE = 'ZF002',
            MESSAGE = format('fence row for resource "%s" cannot be deleted', OLD.resource),
            DETAIL = format('resource=%s;attempted=%s;current=%s', OLD.resource, 0, OLD.token);
    ELSE -- TRUNCATE
        RAISE EXCEPTION USING
            ERRCODE = 'ZF002',
            MESSAGE = 'the fence table cannot be truncated';
    END IF;
END
$$;

CREATE TRIGGER fence_no_going_back
    BEFORE UPDATE OR DELETE ON "${fencingSchema}".fence
    FOR EACH ROW EXECUTE FUNCTION "${fencingSchema}".fence_guard();

CREATE TRIGGER fence_no_truncate
    BEFORE TRUNCATE ON "${fencingSchema}".fence
    FOR EACH STATEMENT EXECUTE FUNCTION "${fencingSchema}".fence_guard();
