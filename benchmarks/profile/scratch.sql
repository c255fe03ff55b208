-- Issue 13 profiling tables in pf, after setup.sh has installed the fence schema pff from the
-- migrations' own SQL.
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
