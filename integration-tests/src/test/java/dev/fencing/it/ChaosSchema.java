package dev.fencing.it;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/** The tables and history triggers of one run, before any fencing migration. */
final class ChaosSchema {

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
              + " attempt text NOT NULL, registered_max bigint, registered_lease text,"
              + " written_at timestamptz)");
      st.execute(
          "CREATE TABLE "
              + s
              + ".registrations (id bigserial PRIMARY KEY, resource text NOT NULL,"
              + " token bigint NOT NULL, lease_id text NOT NULL,"
              + " at timestamptz NOT NULL DEFAULT clock_timestamp())");
      st.execute(
          "CREATE FUNCTION "
              + s
              + ".ledger_seen() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
              + " SELECT r.token, r.lease_id INTO NEW.registered_max, NEW.registered_lease FROM "
              + s
              + ".registrations r WHERE r.resource = NEW.resource ORDER BY r.id DESC LIMIT 1;"
              + " NEW.registered_max := (SELECT max(token) FROM "
              + s
              + ".registrations r WHERE r.resource = NEW.resource);"
              + " NEW.written_at := clock_timestamp(); RETURN NEW; END $$");
      // "zz": after the enforcement trigger (BEFORE triggers fire in name order).
      st.execute(
          "CREATE TRIGGER zz_ledger_seen BEFORE INSERT ON "
              + s
              + ".ledger FOR EACH ROW EXECUTE FUNCTION "
              + s
              + ".ledger_seen()");
      for (int i = 0; i < resources; i++) {
        st.execute("INSERT INTO " + s + ".resources VALUES ('r" + i + "', 0)");
      }
    }
  }
}
