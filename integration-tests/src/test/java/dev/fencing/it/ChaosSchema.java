package dev.fencing.it;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The tables of one run and the triggers that record its history, before any fencing migration.
 *
 * <ul>
 *   <li>{@code resources}: one row per resource with the last {@code seq} of its ledger;
 *   <li>{@code ledger}: one row per ledger step, {@code (resource, seq, token, lease_id, worker,
 *       attempt)};
 *   <li>{@code items}: {@value #ITEMS} rows per resource, each written by one holder at a time,
 *       most of them never touched by the next holder;
 *   <li>{@code shared}: {@value #SHARED} rows written under every resource (a table written under
 *       two resources);
 *   <li>{@code registrations}: the registration history (a trigger on the fence table, or the
 *       workers when fencing is off), in commit order per resource;
 *   <li>{@code judged}: one row per accepted write to {@code ledger}, {@code items} or {@code
 *       shared}, with the registrations committed before that write's commit.
 * </ul>
 *
 * <p>How {@code judged} knows what was committed before a write's commit: a deferred constraint
 * trigger fires at commit, takes a share lock on the resource's {@code clock} row and then reads
 * the registrations (READ COMMITTED: a fresh snapshot per statement). Every registration takes the
 * same row {@code FOR UPDATE} before it is numbered. A registration that commits before the write
 * commits therefore either committed before the trigger read (and is seen), or held the clock row
 * (the trigger waited for its commit, then saw it); one that takes the clock row later waits until
 * the write has committed. So the registrations the trigger sees are exactly those committed before
 * the write, and registration ids per resource follow commit order.
 */
final class ChaosSchema {

  /** Rows per resource in {@code items}. */
  static final int ITEMS = 64;

  /** Rows in {@code shared}. */
  static final int SHARED = 16;

  /** The tables a fenced run fences (and, in trigger mode, enforces). */
  static final String[] FENCED_TABLES = {"resources", "ledger", "items", "shared"};

  private ChaosSchema() {}

  static void create(Connection c, String s, int resources) throws SQLException {
    try (Statement st = c.createStatement()) {
      st.execute("CREATE SCHEMA " + s);
      st.execute(
          "CREATE TABLE " + s + ".resources (resource text PRIMARY KEY, seq bigint NOT NULL)");
      st.execute(
          "CREATE TABLE "
              + s
              + ".ledger (id bigserial PRIMARY KEY, resource text NOT NULL, seq bigint NOT NULL,"
              + " token bigint NOT NULL, lease_id text NOT NULL, worker int NOT NULL,"
              + " attempt text NOT NULL, written_at timestamptz NOT NULL DEFAULT"
              + " clock_timestamp())");
      st.execute(
          "CREATE TABLE "
              + s
              + ".items (resource text NOT NULL, item int NOT NULL, token bigint NOT NULL,"
              + " lease_id text NOT NULL, attempt text NOT NULL, PRIMARY KEY (resource, item))");
      st.execute(
          "CREATE TABLE "
              + s
              + ".shared (item int PRIMARY KEY, resource text NOT NULL, token bigint NOT NULL,"
              + " lease_id text NOT NULL, attempt text NOT NULL)");
      st.execute(
          "CREATE TABLE "
              + s
              + ".registrations (id bigserial PRIMARY KEY, resource text NOT NULL,"
              + " token bigint NOT NULL, lease_id text NOT NULL,"
              + " at timestamptz NOT NULL DEFAULT clock_timestamp())");
      st.execute("CREATE TABLE " + s + ".clock (resource text PRIMARY KEY)");
      st.execute(
          "CREATE TABLE "
              + s
              + ".judged (id bigserial PRIMARY KEY, tbl text NOT NULL, resource text NOT NULL,"
              + " item text, token bigint NOT NULL, lease_id text NOT NULL, attempt text NOT NULL,"
              + " registered_max bigint, registered_lease text, registration bigint,"
              + " committed_at timestamptz NOT NULL DEFAULT clock_timestamp())");
      st.execute(
          "CREATE FUNCTION "
              + s
              + ".number_registration() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
              + " PERFORM 1 FROM "
              + s
              + ".clock WHERE resource = NEW.resource FOR UPDATE;"
              + " NEW.id := nextval(pg_get_serial_sequence('"
              + s
              + ".registrations', 'id'));"
              + " NEW.at := clock_timestamp(); RETURN NEW; END $$");
      st.execute(
          "CREATE TRIGGER number_registration BEFORE INSERT ON "
              + s
              + ".registrations FOR EACH ROW EXECUTE FUNCTION "
              + s
              + ".number_registration()");
      st.execute(
          "CREATE FUNCTION "
              + s
              + ".judge() RETURNS trigger LANGUAGE plpgsql AS $$"
              + " DECLARE last_id bigint; last_lease text; BEGIN"
              + " IF current_setting('transaction_isolation') <> 'read committed' THEN"
              + "   RAISE EXCEPTION 'the chaos judge needs READ COMMITTED';"
              + " END IF;"
              + " PERFORM 1 FROM "
              + s
              + ".clock WHERE resource = NEW.resource FOR SHARE;"
              + " SELECT r.id, r.lease_id INTO last_id, last_lease FROM "
              + s
              + ".registrations r WHERE r.resource = NEW.resource ORDER BY r.id DESC LIMIT 1;"
              + " INSERT INTO "
              + s
              + ".judged (tbl, resource, item, token, lease_id, attempt, registered_max,"
              + " registered_lease, registration) VALUES (TG_TABLE_NAME, NEW.resource,"
              + " coalesce(to_jsonb(NEW) ->> 'item', to_jsonb(NEW) ->> 'seq'), NEW.token,"
              + " NEW.lease_id, NEW.attempt, (SELECT max(r.token) FROM "
              + s
              + ".registrations r WHERE r.resource = NEW.resource), last_lease, last_id);"
              + " RETURN NULL; END $$");
      for (String table : new String[] {"ledger", "items", "shared"}) {
        st.execute(
            "CREATE CONSTRAINT TRIGGER judge_at_commit AFTER INSERT OR UPDATE ON "
                + s
                + "."
                + table
                + " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "
                + s
                + ".judge()");
      }
      for (int i = 0; i < resources; i++) {
        st.execute("INSERT INTO " + s + ".resources VALUES ('r" + i + "', 0)");
        st.execute("INSERT INTO " + s + ".clock VALUES ('r" + i + "')");
      }
    }
  }
}
