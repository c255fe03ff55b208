-- fencing: contract 4, the fence epoch. V1 to V3 stay as they were (their checksums are recorded).
--
-- Every registration records the epoch of the server it committed on: the PostgreSQL timeline of
-- the WAL it was written to. A promotion starts a new timeline, so after a fail-over every
-- registration made before it (the ones the standby received, and, on an asynchronous standby, an
-- older one that a lost newer registration had replaced) names an older epoch, and every guarded
-- write and every checked row refuses it: a holder writes again only after it registered on the new
-- primary, which needs a lease Redis grants it and a token above the fence's. The timeline is read
-- with pg_walfile_name(pg_current_wal_lsn()), whose first 8 hexadecimal digits are the timeline:
-- both functions are open to every role, and a timeline never goes back.
--
-- Rows registered before this migration get the epoch of the server that runs it, so the holders
-- registered at that moment keep writing.

ALTER TABLE "${fencingSchema}".fence ADD COLUMN epoch bigint NOT NULL DEFAULT 0;

COMMENT ON COLUMN "${fencingSchema}".fence.epoch IS
    'fencing: the timeline of the server the registration committed on; a registration of an older timeline (made before a promotion) is refused.';

CREATE FUNCTION "${fencingSchema}".fence_epoch() RETURNS bigint
LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT ('x' OPERATOR(pg_catalog.||) pg_catalog.substr(pg_catalog.pg_walfile_name(pg_catalog.pg_current_wal_lsn()), 1, 8))::pg_catalog.bit(32)::pg_catalog.int8 $$;

UPDATE "${fencingSchema}".fence SET epoch = "${fencingSchema}".fence_epoch();

-- A row written without an epoch (by hand, by an older client) is of the server's current epoch.
ALTER TABLE "${fencingSchema}".fence ALTER COLUMN epoch SET DEFAULT "${fencingSchema}".fence_epoch();

COMMENT ON FUNCTION "${fencingSchema}".fence_epoch() IS
    'fencing: the epoch of this server, its current WAL timeline (changes at every promotion, never goes back).';

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
    v_epoch      bigint;
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
    SELECT f.token, f.lease_id, f.epoch INTO v_current, v_lease_now, v_epoch
      FROM "${fencingSchema}".fence f
     WHERE f.resource = v_resource
       FOR SHARE;
    IF v_current IS NULL OR v_current <> v_token OR v_lease_now <> v_lease
       OR v_epoch <> "${fencingSchema}".fence_epoch() THEN
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
                     WHEN v_current = v_token AND v_lease_now = v_lease THEN
                       'this registration was made before the server''s last promotion (fence epoch '
                       || v_epoch || ', server timeline ' || "${fencingSchema}".fence_epoch()
                       || '): acquire a new lease'
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
    'fencing (contract 4): rejects writes whose fencing.resource/fencing.token/fencing.lease_id is not the registration the fence holds on this server''s epoch (ZF001, fence row locked FOR SHARE per row), rows written under the same resource (or none) with a newer token (ZF001), token-less writes in strict mode (ZF003); stamps fence_token and fence_resource; token-less lenient writes keep the row''s fence columns.';

CREATE OR REPLACE FUNCTION "${fencingSchema}".fence_contract() RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS 'SELECT 4';
