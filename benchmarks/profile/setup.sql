-- Issue 13 profiling schema (pf: data, pff: fence + the V3 trigger functions), built from the
-- migrations' SQL with the schema substituted; see README.md. Drops and recreates pf and pff.
DROP SCHEMA IF EXISTS pff CASCADE; DROP SCHEMA IF EXISTS pf CASCADE; CREATE SCHEMA pff; CREATE SCHEMA pf;
-- fencing: the per-resource fence.
-- pff is a Flyway placeholder; the Java entry point validates it as a plain identifier.

CREATE TABLE "pff".fence (
    resource      text        PRIMARY KEY,
    token         bigint      NOT NULL CHECK (token > 0),
    lease_id      text        NOT NULL,
    registered_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE "pff".fence IS
    'fencing: per resource, the token and lease id of the holder registered last. Never goes backwards.';

-- The fence cannot go backwards: no lowering of token, no re-pointing a token to another lease,
-- no renaming of a resource, no DELETE, no TRUNCATE. SQLSTATE ZF002.
CREATE FUNCTION "pff".fence_guard() RETURNS trigger
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
    BEFORE UPDATE OR DELETE ON "pff".fence
    FOR EACH ROW EXECUTE FUNCTION "pff".fence_guard();

CREATE TRIGGER fence_no_truncate
    BEFORE TRUNCATE ON "pff".fence
    FOR EACH STATEMENT EXECUTE FUNCTION "pff".fence_guard();
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

CREATE OR REPLACE FUNCTION "pff".enforce_fence() RETURNS trigger
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
                   AND NOT EXISTS (SELECT 1 FROM "pff".fence f
                                    WHERE f.resource = NEW.fence_resource
                                      AND f.token = NEW.fence_token) THEN
                    NEW.fence_token := OLD.fence_token;
                    NEW.fence_resource := OLD.fence_resource;
                END IF;
            ELSIF (NEW.fence_token IS DISTINCT FROM 0 OR NEW.fence_resource IS NOT NULL)
                  AND NOT EXISTS (SELECT 1 FROM "pff".fence f
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
      FROM "pff".fence f
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
                       'no holder is registered for this resource in fence schema "pff",'
                       ' which this table''s trigger checks; a writer that registered elsewhere'
                       ' must use FenceOptions.defaults().withSchema("pff")'
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

COMMENT ON FUNCTION "pff".enforce_fence() IS
    'fencing (contract 3): rejects writes whose fencing.resource/fencing.token/fencing.lease_id is not the registration the fence holds (ZF001, fence row locked FOR SHARE per row), rows written under the same resource (or none) with a newer token (ZF001), token-less writes in strict mode (ZF003); stamps fence_token and fence_resource; token-less lenient writes keep the row''s fence columns.';

-- TRUNCATE removes every row without firing row triggers, so it cannot be checked per row, and a
-- table may hold rows of several resources. Strict tables refuse it; lenient ones let a token-less
-- TRUNCATE through (like any token-less write) and refuse one carrying a token.
CREATE OR REPLACE FUNCTION "pff".enforce_fence_truncate() RETURNS trigger
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

COMMENT ON FUNCTION "pff".enforce_fence_truncate() IS
    'fencing (contract 3): BEFORE TRUNCATE trigger of enforced tables; refuses TRUNCATE (ZF003) on strict tables, and on lenient ones when fencing.token is set.';

CREATE OR REPLACE FUNCTION "pff".fence_contract() RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS 'SELECT 3';

COMMENT ON FUNCTION "pff".fence_contract() IS
    'fencing: the version of the SQL contract installed in this schema. Clients call it to check that the schema they were configured with is this fence schema.';

COMMENT ON SCHEMA "pff" IS
    'fencing: the fence schema (fence table, enforcement trigger functions, fencing_schema_history). Clients must be configured with this schema name.';

-- Tables enforced under V2 (partitions included): add fence_resource where missing (the new body
-- reads it) and the TRUNCATE trigger with the same mode. A short lock_timeout: a long transaction on one of these
-- tables makes this migration fail (nothing is changed) instead of queueing every writer behind it;
-- run it again once that transaction is gone.
CREATE TABLE pf.a (id bigint PRIMARY KEY, owner text NOT NULL, balance bigint NOT NULL, fence_token bigint NOT NULL DEFAULT 0, fence_resource text);
INSERT INTO pf.a SELECT g, 'owner-'||g, 0 FROM generate_series(1,100000) g;
CREATE TABLE pf.t (LIKE pf.a INCLUDING ALL);
INSERT INTO pf.t SELECT * FROM pf.a;
CREATE TRIGGER fencing_enforce BEFORE INSERT OR UPDATE OR DELETE ON pf.t FOR EACH ROW EXECUTE FUNCTION pff.enforce_fence('strict');
INSERT INTO pff.fence(resource, token, lease_id) VALUES ('job', 7, 'L7');
VACUUM ANALYZE pf.a; VACUUM ANALYZE pf.t; VACUUM ANALYZE pff.fence;

-- bulk UPDATE variants (issue 13): a minimal row trigger, the row guard + stamp with the definer's
-- rights, and the stamp per row with one fence check per statement over a transition table
CREATE TABLE pf.t2 (LIKE pf.a INCLUDING ALL); INSERT INTO pf.t2 SELECT * FROM pf.a; VACUUM ANALYZE pf.t2;
CREATE TABLE pf.t3 (LIKE pf.a INCLUDING ALL); INSERT INTO pf.t3 SELECT * FROM pf.a; VACUUM ANALYZE pf.t3;
CREATE TABLE pf.t4 (LIKE pf.a INCLUDING ALL); INSERT INTO pf.t4 SELECT * FROM pf.a; VACUUM ANALYZE pf.t4;
CREATE FUNCTION pff.stamp_min() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.fence_token := 7; RETURN NEW; END $$;
CREATE FUNCTION pff.stamp_set() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$ DECLARE v_token bigint := pg_catalog.current_setting('fencing.token', true)::bigint; v_res text := pg_catalog.current_setting('fencing.resource', true); BEGIN IF OLD.fence_token > v_token AND (OLD.fence_resource IS NULL OR OLD.fence_resource = v_res) THEN RAISE EXCEPTION 'stale'; END IF; NEW.fence_token := v_token; NEW.fence_resource := v_res; RETURN NEW; END $$;
CREATE FUNCTION pff.stamp_only() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.fence_token := pg_catalog.current_setting('fencing.token', true)::bigint; NEW.fence_resource := pg_catalog.current_setting('fencing.resource', true); RETURN NEW; END $$;
CREATE FUNCTION pff.check_stmt() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE v_token bigint := current_setting('fencing.token', true)::bigint; v_res text := current_setting('fencing.resource', true); v_lease text := current_setting('fencing.lease_id', true); v_cur bigint; v_l text;
BEGIN
  SELECT f.token, f.lease_id INTO v_cur, v_l FROM pff.fence f WHERE f.resource = v_res FOR SHARE;
  IF v_cur IS DISTINCT FROM v_token OR v_l IS DISTINCT FROM v_lease THEN RAISE EXCEPTION 'stale'; END IF;
  IF EXISTS (SELECT 1 FROM o WHERE o.fence_token > v_token AND (o.fence_resource IS NULL OR o.fence_resource = v_res)) THEN RAISE EXCEPTION 'row stale'; END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER s BEFORE UPDATE ON pf.t2 FOR EACH ROW EXECUTE FUNCTION pff.stamp_min();
CREATE TRIGGER s BEFORE UPDATE ON pf.t3 FOR EACH ROW EXECUTE FUNCTION pff.stamp_set();
CREATE TRIGGER s BEFORE UPDATE ON pf.t4 FOR EACH ROW EXECUTE FUNCTION pff.stamp_only();
CREATE TRIGGER c AFTER UPDATE ON pf.t4 REFERENCING OLD TABLE AS o FOR EACH STATEMENT EXECUTE FUNCTION pff.check_stmt();
