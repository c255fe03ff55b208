-- fencing: optional trigger enforcement for user tables.
-- Installed per table (by the Java entry point or by hand) as
--   CREATE TRIGGER fencing_enforce BEFORE INSERT OR UPDATE OR DELETE ON t
--       FOR EACH ROW EXECUTE FUNCTION "${fencingSchema}".enforce_fence('strict' | 'lenient');
--
-- Reads the settings fencing.resource, fencing.token and fencing.lease_id (session-level or
-- transaction-local). Every name is schema-qualified: the schema is a placeholder and callers may
-- run with any search_path.
CREATE FUNCTION "${fencingSchema}".enforce_fence() RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
    v_token_text text := current_setting('fencing.token', true);
    v_resource   text;
    v_lease      text;
    v_token      bigint;
    v_key        text;
    v_current    bigint;
    v_lease_now  text;
BEGIN
    IF v_token_text IS NULL OR v_token_text = '' THEN
        IF TG_NARGS = 1 AND TG_ARGV[0] = 'lenient' THEN
            IF TG_OP = 'DELETE' THEN
                RETURN OLD;
            END IF;
            RETURN NEW;
        ELSIF TG_NARGS = 1 AND TG_ARGV[0] = 'strict' THEN
            RAISE EXCEPTION USING
                ERRCODE = 'ZF003',
                MESSAGE = format('write without a fencing token on %I.%I (%s)',
                                 TG_TABLE_SCHEMA, TG_TABLE_NAME, TG_OP),
                HINT = 'set fencing.resource, fencing.token and fencing.lease_id before writing to a fenced table';
        ELSE
            RAISE EXCEPTION USING
                ERRCODE = '22023',
                MESSAGE = format('trigger on %I.%I must pass ''strict'' or ''lenient'' to enforce_fence()',
                                 TG_TABLE_SCHEMA, TG_TABLE_NAME);
        END IF;
    END IF;

    v_resource := current_setting('fencing.resource', true);
    v_lease := current_setting('fencing.lease_id', true);
    IF v_resource IS NULL OR v_resource = '' OR v_lease IS NULL OR v_lease = '' THEN
        RAISE EXCEPTION USING
            ERRCODE = 'ZF003',
            MESSAGE = format('fencing.token is set but fencing.resource or fencing.lease_id is not (write on %I.%I)',
                             TG_TABLE_SCHEMA, TG_TABLE_NAME),
            HINT = 'set fencing.resource, fencing.token and fencing.lease_id together';
    END IF;
    v_token := v_token_text::bigint;

    -- One fence lookup per transaction and registration: the share lock taken below is held until
    -- commit, so the answer cannot change before then. The key carries the transaction id (a value
    -- left over from another transaction never matches), the fence schema, and the registration;
    -- the resource is length-prefixed so that no two registrations share a key.
    v_key := pg_catalog.pg_current_xact_id()::text || '|${fencingSchema}|'
             || length(v_resource)::text || ':' || v_resource || '/' || v_token::text || '/' || v_lease;
    IF current_setting('fencing.verified', true) IS DISTINCT FROM v_key THEN
        SELECT f.token, f.lease_id INTO v_current, v_lease_now
          FROM "${fencingSchema}".fence f
         WHERE f.resource = v_resource
           FOR SHARE;
        IF v_current IS NULL OR v_current <> v_token OR v_lease_now <> v_lease THEN
            RAISE EXCEPTION USING
                ERRCODE = 'ZF001',
                MESSAGE = format('stale fencing token for resource "%s": attempted %s, current %s',
                                 v_resource, v_token, coalesce(v_current, 0)),
                DETAIL = format('resource=%s;attempted=%s;current=%s',
                                v_resource, v_token, coalesce(v_current, 0)),
                HINT = CASE
                         WHEN v_current IS NULL THEN 'no holder is registered for this resource'
                         WHEN v_current = v_token THEN 'the fence names another lease with the same token'
                         ELSE 'a newer holder registered for this resource'
                       END;
        END IF;
        PERFORM set_config('fencing.verified', v_key, true);
    END IF;

    IF TG_OP = 'DELETE' THEN
        IF OLD.fence_token > v_token THEN
            RAISE EXCEPTION USING
                ERRCODE = 'ZF001',
                MESSAGE = format('stale fencing token for resource "%s": attempted %s, current %s',
                                 v_resource, v_token, OLD.fence_token),
                DETAIL = format('resource=%s;attempted=%s;current=%s', v_resource, v_token, OLD.fence_token),
                HINT = format('row of %I.%I was written with a newer token', TG_TABLE_SCHEMA, TG_TABLE_NAME);
        END IF;
        RETURN OLD;
    END IF;
    IF TG_OP = 'UPDATE' AND OLD.fence_token > v_token THEN
        RAISE EXCEPTION USING
            ERRCODE = 'ZF001',
            MESSAGE = format('stale fencing token for resource "%s": attempted %s, current %s',
                             v_resource, v_token, OLD.fence_token),
            DETAIL = format('resource=%s;attempted=%s;current=%s', v_resource, v_token, OLD.fence_token),
            HINT = format('row of %I.%I was written with a newer token', TG_TABLE_SCHEMA, TG_TABLE_NAME);
    END IF;
    NEW.fence_token := v_token;
    RETURN NEW;
END
$$;

COMMENT ON FUNCTION "${fencingSchema}".enforce_fence() IS
    'fencing: rejects writes whose fencing.token/fencing.lease_id is not the registration the fence holds (ZF001), token-less writes in strict mode (ZF003); stamps fence_token.';
