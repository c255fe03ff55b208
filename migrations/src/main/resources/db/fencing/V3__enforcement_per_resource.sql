-- fencing: contract 3 of the enforcement trigger. V1 and V2 stay as they were (their checksums are
-- recorded); this migration replaces the body of enforce_fence() in place, so the fencing_enforce
-- triggers already installed call the new body at once.
--
-- What changed against V2:
--   * Tokens are compared only within one resource: a row's fence_token is compared with the
--     writer's token only when the row's fence_resource is the writer's resource or NULL (a row
--     written before the column existed, or without a lease). A write stamps both columns.
--   * No per-transaction marker: V2 skipped the fence lookup when the setting fencing.verified held
--     the transaction id and registration, and anyone can set that setting. Every row now looks the
--     fence row up FOR SHARE; a repeated share lock by the same transaction changes nothing on disk.
--   * A write without a lease never moves a row's fence columns (lenient mode): an UPDATE keeps the
--     row's fence_token and fence_resource, an INSERT gets 0 and NULL, unless the new values are
--     exactly the current registration of that resource (what a guarded statement writes, which
--     cannot lock a later holder out).
--   * The function runs with its owner's rights (SECURITY DEFINER, search_path pinned), so roles
--     that write fenced tables need no privilege on the fence schema and cannot read lease ids.
--   * TRUNCATE of an enforced table is refused (trigger fencing_truncate, enforce_fence_truncate()):
--     always in strict mode; in lenient mode when it carries a token.
--   * fence_contract() returns the contract version, for clients to check their configured schema.

CREATE OR REPLACE FUNCTION "${fencingSchema}".enforce_fence() RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_token_text text := pg_catalog.current_setting('fencing.token', true);
    v_resource   text;
    v_lease      text;
    v_token      bigint;
    v_current    bigint;
    v_lease_now  text;
BEGIN
    IF v_token_text IS NULL OR v_token_text = '' THEN
        IF TG_NARGS = 1 AND TG_ARGV[0] = 'lenient' THEN
            IF TG_OP = 'DELETE' THEN
                RETURN OLD;
            END IF;
            IF TG_OP = 'UPDATE' THEN
                IF (NEW.fence_token IS DISTINCT FROM OLD.fence_token
                        OR NEW.fence_resource IS DISTINCT FROM OLD.fence_resource)
                   AND NOT EXISTS (SELECT 1 FROM "${fencingSchema}".fence f
                                    WHERE f.resource = NEW.fence_resource
                                      AND f.token = NEW.fence_token) THEN
                    NEW.fence_token := OLD.fence_token;
                    NEW.fence_resource := OLD.fence_resource;
                END IF;
            ELSIF (NEW.fence_token IS DISTINCT FROM 0 OR NEW.fence_resource IS NOT NULL)
                  AND NOT EXISTS (SELECT 1 FROM "${fencingSchema}".fence f
                                   WHERE f.resource = NEW.fence_resource
                                     AND f.token = NEW.fence_token) THEN
                NEW.fence_token := 0;
                NEW.fence_resource := NULL;
            END IF;
            RETURN NEW;
        ELSIF TG_NARGS = 1 AND TG_ARGV[0] = 'strict' THEN
            RAISE EXCEPTION USING
                ERRCODE = 'ZF003',
                MESSAGE = format('write without a fencing token on %I.%I (%s)',
                                 TG_TABLE_SCHEMA, TG_TABLE_NAME, TG_OP),
                HINT = 'From Java, write inside Fencing.run on a connection of'
                       ' FencedDataSource.wrap(dataSource, FenceOptions.defaults().withTriggerMode(true));'
                       ' guarded statements alone do not carry the lease to this trigger.'
                       ' From SQL, set fencing.resource, fencing.token and fencing.lease_id first.';
        ELSE
            RAISE EXCEPTION USING
                ERRCODE = '22023',
                MESSAGE = format('trigger on %I.%I must pass ''strict'' or ''lenient'' to enforce_fence()',
                                 TG_TABLE_SCHEMA, TG_TABLE_NAME);
        END IF;
    END IF;

    v_resource := pg_catalog.current_setting('fencing.resource', true);
    v_lease := pg_catalog.current_setting('fencing.lease_id', true);
    IF v_resource IS NULL OR v_resource = '' OR v_lease IS NULL OR v_lease = '' THEN
        RAISE EXCEPTION USING
            ERRCODE = 'ZF003',
            MESSAGE = format('fencing.token is set but fencing.resource or fencing.lease_id is not (write on %I.%I)',
                             TG_TABLE_SCHEMA, TG_TABLE_NAME),
            HINT = 'set fencing.resource, fencing.token and fencing.lease_id together';
    END IF;
    v_token := v_token_text::bigint;

    -- The fence row must name this registration, checked under a share lock held until commit, so
    -- a newer registration waits for this transaction. Checked for every row: nothing a session can
    -- set may stand in for it.
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
                     WHEN v_current IS NULL THEN
                       'no holder is registered for this resource in fence schema "${fencingSchema}",'
                       ' which this table''s trigger checks; a writer that registered elsewhere'
                       ' must use FenceOptions.defaults().withSchema("${fencingSchema}")'
                     WHEN v_current = v_token THEN 'the fence names another lease with the same token'
                     ELSE 'a newer holder registered for this resource'
                   END;
    END IF;

    -- Row guard, within one resource: a row last written under another resource says nothing about
    -- this one's tokens; a row without a resource (legacy) is compared.
    IF TG_OP <> 'INSERT' THEN
        IF OLD.fence_token > v_token
           AND (OLD.fence_resource IS NULL OR OLD.fence_resource = v_resource) THEN
            RAISE EXCEPTION USING
                ERRCODE = 'ZF001',
                MESSAGE = format('stale fencing token for resource "%s": attempted %s, current %s',
                                 v_resource, v_token, OLD.fence_token),
                DETAIL = format('resource=%s;attempted=%s;current=%s',
                                v_resource, v_token, OLD.fence_token),
                HINT = format('row of %I.%I was written with a newer token', TG_TABLE_SCHEMA, TG_TABLE_NAME);
        END IF;
        IF TG_OP = 'DELETE' THEN
            RETURN OLD;
        END IF;
    END IF;
    NEW.fence_token := v_token;
    NEW.fence_resource := v_resource;
    RETURN NEW;
END
$$;

COMMENT ON FUNCTION "${fencingSchema}".enforce_fence() IS
    'fencing (contract 3): rejects writes whose fencing.resource/fencing.token/fencing.lease_id is not the registration the fence holds (ZF001, fence row locked FOR SHARE per row), rows written under the same resource (or none) with a newer token (ZF001), token-less writes in strict mode (ZF003); stamps fence_token and fence_resource; token-less lenient writes keep the row''s fence columns.';

-- TRUNCATE removes every row without firing row triggers, so it cannot be checked per row, and a
-- table may hold rows of several resources. Strict tables refuse it; lenient ones let a token-less
-- TRUNCATE through (like any token-less write) and refuse one carrying a token.
CREATE OR REPLACE FUNCTION "${fencingSchema}".enforce_fence_truncate() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_token_text text := pg_catalog.current_setting('fencing.token', true);
BEGIN
    IF TG_NARGS <> 1 OR TG_ARGV[0] NOT IN ('strict', 'lenient') THEN
        RAISE EXCEPTION USING
            ERRCODE = '22023',
            MESSAGE = format('trigger on %I.%I must pass ''strict'' or ''lenient'' to enforce_fence_truncate()',
                             TG_TABLE_SCHEMA, TG_TABLE_NAME);
    END IF;
    IF TG_ARGV[0] = 'lenient' AND (v_token_text IS NULL OR v_token_text = '') THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION USING
        ERRCODE = 'ZF003',
        MESSAGE = format('TRUNCATE of fenced table %I.%I is refused: its rows cannot be checked against the fence',
                         TG_TABLE_SCHEMA, TG_TABLE_NAME),
        HINT = 'use DELETE inside a fenced transaction: each row is then checked against the writer''s'
               ' registration, and rows of other resources are left to their own holders';
END
$$;

COMMENT ON FUNCTION "${fencingSchema}".enforce_fence_truncate() IS
    'fencing (contract 3): BEFORE TRUNCATE trigger of enforced tables; refuses TRUNCATE (ZF003) on strict tables, and on lenient ones when fencing.token is set.';

CREATE OR REPLACE FUNCTION "${fencingSchema}".fence_contract() RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS 'SELECT 3';

COMMENT ON FUNCTION "${fencingSchema}".fence_contract() IS
    'fencing: the version of the SQL contract installed in this schema. Clients call it to check that the schema they were configured with is this fence schema.';

COMMENT ON SCHEMA "${fencingSchema}" IS
    'fencing: the fence schema (fence table, enforcement trigger functions, fencing_schema_history). Clients must be configured with this schema name.';

-- Tables enforced under V2 (partitions included): add fence_resource where missing (the new body
-- reads it) and the TRUNCATE trigger with the same mode. A short lock_timeout: a long transaction on one of these
-- tables makes this migration fail (nothing is changed) instead of queueing every writer behind it;
-- run it again once that transaction is gone.
DO $$
DECLARE
    r record;
    v_mode text;
BEGIN
    PERFORM pg_catalog.set_config('lock_timeout', '2s', true);
    FOR r IN
        SELECT t.tgrelid, t.tgnargs, t.tgargs, c.relispartition
          FROM pg_catalog.pg_trigger t
          JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid
         WHERE t.tgname = 'fencing_enforce'
           AND t.tgfoid = '"${fencingSchema}".enforce_fence()'::pg_catalog.regprocedure
         ORDER BY c.relispartition
    LOOP
        v_mode := CASE
                    WHEN r.tgnargs = 1
                         AND r.tgargs = pg_catalog.convert_to('lenient', 'UTF8') || '\x00'::pg_catalog.bytea
                      THEN 'lenient'
                    ELSE 'strict'
                  END;
        -- A partition gets its columns from its parent (its row trigger is a clone of the
        -- parent's); it needs its own TRUNCATE trigger, as statement triggers are not cloned.
        IF NOT r.relispartition AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
                        WHERE a.attrelid = r.tgrelid AND a.attname = 'fence_resource'
                          AND NOT a.attisdropped) THEN
            EXECUTE pg_catalog.format('ALTER TABLE %s ADD COLUMN fence_resource text',
                                      r.tgrelid::pg_catalog.regclass);
        END IF;
        EXECUTE pg_catalog.format(
            'CREATE OR REPLACE TRIGGER fencing_truncate BEFORE TRUNCATE ON %s'
            ' FOR EACH STATEMENT EXECUTE FUNCTION %I.enforce_fence_truncate(%L)',
            r.tgrelid::pg_catalog.regclass, '${fencingSchema}', v_mode);
    END LOOP;
END
$$;
