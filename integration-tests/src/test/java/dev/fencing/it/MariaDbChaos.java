package dev.fencing.it;

import dev.fencing.migrations.FencingMigrations;
import dev.fencing.migrations.MigrationOptions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.mariadb.jdbc.MariaDbDataSource;

/**
 * MariaDB (InnoDB) as the chaos run's database. The run's tables live in a database of their own
 * ({@code fencing_chaos_<suffix>}), the fence in another ({@code fencing_chaos_<suffix>_fence}),
 * installed by the migrations module. Each worker connects as a user of its own (its application
 * name), so the connection-ending fault can {@code KILL CONNECTION} exactly its sessions. Only the
 * guarded mode runs here: trigger mode and the plain-SQL rewrite are refused on MariaDB.
 *
 * <h2>Judging at commit time without deferred triggers</h2>
 *
 * <p>One row, {@code clock}, is the commit clock. Every transaction that must be ordered takes it
 * exclusively ({@code UPDATE clock SET n = n + 1}) and reads the value it wrote:
 *
 * <ul>
 *   <li>a workload transaction as its <b>last statement before {@code COMMIT}</b> ({@link
 *       #beforeCommit}: {@code CALL commit_clock()}), which stores {@code (transaction key, n)} in
 *       {@code commits}; a write in auto-commit does it in its own trigger, the statement being the
 *       whole transaction;
 *   <li>a registration in the {@code BEFORE INSERT} trigger of {@code registrations}, into which a
 *       test-scope {@code AFTER INSERT/UPDATE} trigger on the fence table copies every change of
 *       the fence (with fencing off, the worker's acquisition is inserted there directly).
 * </ul>
 *
 * <p>Why clock order is commit order: InnoDB keeps the row's exclusive lock until the transaction
 * ends. Take two transactions A and B that both took the clock, A with the smaller value: A got the
 * lock first, so B got it only after A released it, i.e. after A committed (a rolled-back
 * transaction's increment is undone and leaves no row to judge); B then committed after taking it.
 * So A committed before B, for any two such transactions, wherever in them they take the clock.
 * Hence the registrations committed before a write's commit are exactly those with a smaller clock
 * than the write's transaction, which is what the view {@code judged} computes, with the same
 * columns as PostgreSQL's table, for the shared {@link Checker}. Taking the clock last only keeps
 * the lock short. There is no deadlock through it: the clock is the last lock a transaction takes
 * (a registration holds the fence row, a writer its rows and the fence row in share mode, before).
 *
 * <p>Each write is logged by an {@code AFTER INSERT/UPDATE} trigger on {@code ledger}, {@code
 * items} and {@code shared} into {@code writes}, tagged with a transaction key: the session
 * variable {@code @fencing_chaos_tx} (set by the first logged write, cleared by {@code
 * commit_clock}). A rolled-back transaction leaves the key set but its logged rows gone, so the
 * next transaction reusing it is still judged at its own commit. A commit that skipped {@code
 * commit_clock} leaves its writes without a {@code commits} row ({@code unclocked-write}, counted
 * as a violation); if the session's next transaction then reused the key, those writes would be
 * judged at that later commit, against more registrations: stricter, never hiding a violation.
 */
final class MariaDbChaos implements ChaosDatabase {

  static final MariaDbChaos INSTANCE = new MariaDbChaos();

  static final String JDBC =
      System.getProperty("fencing.test.mariadb", "jdbc:mariadb://127.0.0.1:3306/test?user=root");

  private static final Pattern SERVER = Pattern.compile("^(jdbc:mariadb://[^/?]+)");
  private static final String ASCII = " CHARACTER SET ascii COLLATE ascii_bin";

  private MariaDbChaos() {}

  @Override
  public String name() {
    return "mariadb";
  }

  @Override
  public String jdbc() {
    return JDBC;
  }

  @Override
  public void requireReachable() {
    try (Connection c = DriverManager.getConnection(JDBC)) {
      c.isValid(2);
    } catch (SQLException e) {
      throw new AssertionError(
          "MariaDB is not reachable at "
              + JDBC
              + " ("
              + e.getMessage()
              + "); start it with: start-stop-daemon --start --oknodo --background --exec"
              + " /usr/sbin/mariadbd -- --user=mysql (or point -Dfencing.test.mariadb at another"
              + " server)",
          e);
    }
  }

  @Override
  public String schemaName(String suffix) {
    return "fencing_chaos_" + suffix;
  }

  @Override
  public String fenceSchemaName(String suffix) {
    return "fencing_chaos_" + suffix + "_fence";
  }

  @Override
  public void create(Connection admin, String s, int resources) throws SQLException {
    String text = " VARCHAR(128)" + ASCII + " NOT NULL";
    try (Statement st = admin.createStatement()) {
      st.execute("CREATE DATABASE " + s);
      st.execute(
          "CREATE TABLE "
              + s
              + ".resources (resource VARCHAR(64)"
              + ASCII
              + " PRIMARY KEY, seq BIGINT NOT NULL) ENGINE=InnoDB");
      st.execute(
          "CREATE TABLE "
              + s
              + ".ledger (id BIGINT AUTO_INCREMENT PRIMARY KEY, resource"
              + text
              + ", seq BIGINT NOT NULL, token BIGINT NOT NULL, lease_id"
              + text
              + ", worker INT NOT NULL, attempt"
              + text
              + ", written_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)) ENGINE=InnoDB");
      st.execute(
          "CREATE TABLE "
              + s
              + ".items (resource"
              + text
              + ", item INT NOT NULL, token BIGINT NOT NULL, lease_id"
              + text
              + ", attempt"
              + text
              + ", PRIMARY KEY (resource, item)) ENGINE=InnoDB");
      st.execute(
          "CREATE TABLE "
              + s
              + ".shared (item INT PRIMARY KEY, resource"
              + text
              + ", token BIGINT NOT NULL, lease_id"
              + text
              + ", attempt"
              + text
              + ") ENGINE=InnoDB");
      st.execute(
          "CREATE TABLE "
              + s
              + ".registrations (id BIGINT AUTO_INCREMENT PRIMARY KEY, resource"
              + text
              + ", token BIGINT NOT NULL, lease_id"
              + text
              + ", clock BIGINT NOT NULL DEFAULT 0,"
              + " at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),"
              + " KEY (resource, clock)) ENGINE=InnoDB");
      st.execute(
          "CREATE TABLE " + s + ".clock (id TINYINT PRIMARY KEY, n BIGINT NOT NULL) ENGINE=InnoDB");
      st.execute("INSERT INTO " + s + ".clock VALUES (1, 0)");
      st.execute(
          "CREATE TABLE "
              + s
              + ".writes (id BIGINT AUTO_INCREMENT PRIMARY KEY, tx BIGINT UNSIGNED NOT NULL,"
              + " tbl VARCHAR(16) NOT NULL, resource"
              + text
              + ", item VARCHAR(32) NOT NULL, token BIGINT NOT NULL, lease_id"
              + text
              + ", attempt"
              + text
              + ", KEY (tx), KEY (tbl, resource, item)) ENGINE=InnoDB");
      st.execute(
          "CREATE TABLE "
              + s
              + ".commits (tx BIGINT UNSIGNED PRIMARY KEY, clock BIGINT NOT NULL, KEY (clock))"
              + " ENGINE=InnoDB");
      st.execute(
          "CREATE PROCEDURE "
              + s
              + ".commit_clock() MODIFIES SQL DATA BEGIN"
              + " IF @fencing_chaos_tx IS NOT NULL THEN"
              + "   UPDATE "
              + s
              + ".clock SET n = n + 1 WHERE id = 1;"
              + "   INSERT INTO "
              + s
              + ".commits (tx, clock) SELECT @fencing_chaos_tx, n FROM "
              + s
              + ".clock WHERE id = 1 ON DUPLICATE KEY UPDATE clock = VALUES(clock);"
              + "   SET @fencing_chaos_tx = NULL;"
              + " END IF; END");
      st.execute(
          "CREATE PROCEDURE "
              + s
              + ".log_write(t VARCHAR(16), res VARCHAR(128), it VARCHAR(32), tok BIGINT,"
              + " lease VARCHAR(128), att VARCHAR(128)) MODIFIES SQL DATA BEGIN"
              + " IF @fencing_chaos_tx IS NULL THEN SET @fencing_chaos_tx = UUID_SHORT(); END IF;"
              + " INSERT INTO "
              + s
              + ".writes (tx, tbl, resource, item, token, lease_id, attempt)"
              + " VALUES (@fencing_chaos_tx, t, res, it, tok, lease, att);"
              + " IF @@autocommit = 1 THEN CALL "
              + s
              + ".commit_clock(); END IF; END");
      for (String table : new String[] {"ledger", "items", "shared"}) {
        String item = table.equals("ledger") ? "NEW.seq" : "NEW.item";
        for (String event : new String[] {"INSERT", "UPDATE"}) {
          st.execute(
              "CREATE TRIGGER "
                  + s
                  + "."
                  + table
                  + "_log_"
                  + event.toLowerCase(java.util.Locale.ROOT)
                  + " AFTER "
                  + event
                  + " ON "
                  + s
                  + "."
                  + table
                  + " FOR EACH ROW CALL "
                  + s
                  + ".log_write('"
                  + table
                  + "', NEW.resource, CAST("
                  + item
                  + " AS CHAR), NEW.token, NEW.lease_id, NEW.attempt)");
        }
      }
      st.execute(
          "CREATE TRIGGER "
              + s
              + ".registrations_clock BEFORE INSERT ON "
              + s
              + ".registrations FOR EACH ROW BEGIN UPDATE "
              + s
              + ".clock SET n = n + 1 WHERE id = 1; SET NEW.clock = (SELECT n FROM "
              + s
              + ".clock WHERE id = 1); END");
      String before = "FROM " + s + ".registrations r WHERE r.resource = w.resource";
      st.execute(
          "CREATE VIEW "
              + s
              + ".judged AS SELECT w.id, w.tbl, w.resource, w.item, w.token, w.lease_id,"
              + " w.attempt, c.clock AS committed_clock,"
              + " (SELECT max(r.token) "
              + before
              + " AND r.clock < c.clock) AS registered_max,"
              + " (SELECT r.lease_id "
              + before
              + " AND r.clock < c.clock ORDER BY r.clock DESC LIMIT 1) AS registered_lease,"
              + " (SELECT r.id "
              + before
              + " AND r.clock < c.clock ORDER BY r.clock DESC LIMIT 1) AS registration"
              + " FROM "
              + s
              + ".writes w JOIN "
              + s
              + ".commits c ON c.tx = w.tx");
      for (int i = 0; i < resources; i++) {
        st.execute("INSERT INTO " + s + ".resources VALUES ('r" + i + "', 0)");
      }
    }
  }

  @Override
  public void installFence(String s, String fenceSchema, String mode) throws SQLException {
    if (!mode.equals("guarded") && !mode.equals("off")) {
      throw new IllegalArgumentException(
          "MariaDB runs the guarded mode (and the fencing-off control) only; "
              + mode
              + " is refused"
              + " there");
    }
    MigrationOptions.Builder options = MigrationOptions.builder().schema(fenceSchema);
    for (String table : ChaosSchema.FENCED_TABLES) {
      options.fence(s + "." + table);
    }
    FencingMigrations.migrate(new MariaDbDataSource(JDBC), options.build());
    String copy =
        "INSERT INTO "
            + s
            + ".registrations (resource, token, lease_id)"
            + " VALUES (NEW.resource, NEW.token, NEW.lease_id)";
    try (Connection c = DriverManager.getConnection(JDBC);
        Statement st = c.createStatement()) {
      st.execute(
          "CREATE TRIGGER "
              + fenceSchema
              + ".zz_log_registration_insert AFTER INSERT ON "
              + fenceSchema
              + ".fence FOR EACH ROW "
              + copy);
      // A refused registration leaves the row as it was: not a registration.
      st.execute(
          "CREATE TRIGGER "
              + fenceSchema
              + ".zz_log_registration_update AFTER UPDATE ON "
              + fenceSchema
              + ".fence FOR EACH ROW BEGIN IF NEW.token <> OLD.token OR NEW.lease_id <>"
              + " OLD.lease_id THEN "
              + copy
              + "; END IF; END");
    }
  }

  @Override
  public String workerJdbc(String appName, String schema, String fenceSchema) throws SQLException {
    try (Connection c = DriverManager.getConnection(JDBC);
        Statement st = c.createStatement()) {
      st.execute("CREATE USER IF NOT EXISTS '" + appName + "'@'%'");
      st.execute("GRANT ALL ON " + schema + ".* TO '" + appName + "'@'%'");
      st.execute("GRANT ALL ON " + fenceSchema + ".* TO '" + appName + "'@'%'");
    }
    Matcher server = SERVER.matcher(JDBC);
    if (!server.find()) {
      throw new IllegalArgumentException("not a MariaDB URL: " + JDBC);
    }
    return server.group(1) + "/" + schema + "?user=" + appName;
  }

  @Override
  public Map<String, String> workerPoolProperties(String appName) {
    return Map.of();
  }

  @Override
  public String endConnections(String appName) throws SQLException {
    List<Long> ids = new ArrayList<>();
    try (Connection c = DriverManager.getConnection(JDBC)) {
      try (PreparedStatement find =
          c.prepareStatement("SELECT ID FROM information_schema.PROCESSLIST WHERE USER = ?")) {
        find.setString(1, appName);
        try (ResultSet rs = find.executeQuery()) {
          while (rs.next()) {
            ids.add(rs.getLong(1));
          }
        }
      }
      kill(c, ids);
    }
    return "KILL CONNECTION of " + ids.size();
  }

  private static void kill(Connection c, List<Long> ids) {
    for (long id : ids) {
      try (Statement st = c.createStatement()) {
        st.execute("KILL CONNECTION " + id);
      } catch (SQLException gone) {
        // ended meanwhile
      }
    }
  }

  @Override
  public void cleanUp(String suffix, String schema, String fenceSchema, boolean keep)
      throws SQLException {
    try (Connection c = DriverManager.getConnection(JDBC)) {
      String users = "fencing-it-" + suffix + "-%";
      List<Long> ids = new ArrayList<>();
      try (PreparedStatement find =
          c.prepareStatement("SELECT ID FROM information_schema.PROCESSLIST WHERE USER LIKE ?")) {
        find.setString(1, users);
        try (ResultSet rs = find.executeQuery()) {
          while (rs.next()) {
            ids.add(rs.getLong(1));
          }
        }
      }
      kill(c, ids);
      List<String> names = new ArrayList<>();
      try (PreparedStatement find =
          c.prepareStatement("SELECT User FROM mysql.user WHERE User LIKE ?")) {
        find.setString(1, users);
        try (ResultSet rs = find.executeQuery()) {
          while (rs.next()) {
            names.add(rs.getString(1));
          }
        }
      }
      try (Statement st = c.createStatement()) {
        for (String name : names) {
          st.execute("DROP USER IF EXISTS '" + name + "'@'%'");
        }
        if (!keep) {
          st.execute("DROP DATABASE IF EXISTS " + schema);
          st.execute("DROP DATABASE IF EXISTS " + fenceSchema);
        }
      }
    }
  }

  @Override
  public String plainItemUpsert(String schema) {
    return "INSERT INTO "
        + schema
        + ".items (resource, item, token, lease_id, attempt) VALUES (?, ?, ?, ?, ?)"
        + " ON DUPLICATE KEY UPDATE token = VALUES(token), lease_id = VALUES(lease_id),"
        + " attempt = VALUES(attempt)";
  }

  @Override
  public String plainSharedUpsert(String schema) {
    return "INSERT INTO "
        + schema
        + ".shared (item, resource, token, lease_id, attempt) VALUES (?, ?, ?, ?, ?)"
        + " ON DUPLICATE KEY UPDATE resource = VALUES(resource), token = VALUES(token),"
        + " lease_id = VALUES(lease_id), attempt = VALUES(attempt)";
  }

  @Override
  public boolean upsertWroteItsRow(int count) {
    return count == 1 || count == 2;
  }

  @Override
  public void beforeCommit(Connection c, String schema) throws SQLException {
    try (Statement st = c.createStatement()) {
      st.execute("CALL " + schema + ".commit_clock()");
    }
  }

  /**
   * Checks of the recorder: every committed write has its commit clock ({@code unclocked-write});
   * no clock value was handed out twice ({@code clock-reused}); the last write of every row (each
   * ledger row, the current items and shared rows) was logged ({@code unlogged-write}).
   */
  @Override
  public Map<String, String> recorderChecks(String s) {
    Map<String, String> checks = new LinkedHashMap<>();
    checks.put(
        "unclocked-write",
        "SELECT w.tbl, w.resource, w.item, w.token, w.attempt FROM "
            + s
            + ".writes w LEFT JOIN "
            + s
            + ".commits c ON c.tx = w.tx WHERE c.tx IS NULL ORDER BY w.id");
    checks.put(
        "clock-reused",
        "SELECT clock, count(*) FROM (SELECT clock FROM "
            + s
            + ".commits UNION ALL SELECT clock FROM "
            + s
            + ".registrations) x GROUP BY clock HAVING count(*) > 1");
    StringBuilder unlogged = new StringBuilder();
    for (String[] t : new String[][] {{"ledger", "seq"}, {"items", "item"}, {"shared", "item"}}) {
      if (unlogged.length() > 0) {
        unlogged.append(" UNION ALL ");
      }
      unlogged
          .append("SELECT '")
          .append(t[0])
          .append("' AS tbl, d.resource, d.")
          .append(t[1])
          .append(" AS item, d.attempt FROM ")
          .append(s)
          .append('.')
          .append(t[0])
          .append(" d WHERE NOT EXISTS (SELECT 1 FROM ")
          .append(s)
          .append(".writes w WHERE w.tbl = '")
          .append(t[0])
          .append("' AND w.resource = d.resource AND w.item = CAST(d.")
          .append(t[1])
          .append(" AS CHAR) AND w.attempt = d.attempt)");
    }
    checks.put("unlogged-write", unlogged.toString());
    return checks;
  }
}
