package dev.fencing.examples;

import static org.assertj.core.api.Assertions.fail;

import com.zaxxer.hikari.HikariDataSource;
import java.sql.SQLException;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The real servers the tests use, from the {@code fencing.test.jdbc}, {@code fencing.test.mariadb}
 * and {@code fencing.test.redis} system properties. A missing server fails the test, saying how to
 * start it.
 */
final class TestServers {

  static final String JDBC =
      System.getProperty(
          "fencing.test.jdbc", "jdbc:postgresql://127.0.0.1:5432/test?user=postgres");
  static final String REDIS = System.getProperty("fencing.test.redis", "redis://127.0.0.1:6379");
  static final String MARIADB =
      System.getProperty("fencing.test.mariadb", "jdbc:mariadb://127.0.0.1:3306/test?user=root");

  private TestServers() {}

  static void requirePostgres() {
    try {
      Servers.checkDatabase(JDBC);
    } catch (ServerException e) {
      fail(
          e.getMessage()
              + ". Start PostgreSQL (e.g. `pg_ctlcluster --skip-systemctl-redirect 15 main start`,"
              + " or `bash .ci/run`), or point -Dfencing.test.jdbc=jdbc:postgresql://... at one.");
    }
  }

  static void requireMariaDb() {
    try {
      Servers.checkDatabase(MARIADB);
    } catch (ServerException e) {
      fail(
          e.getMessage()
              + ". Start MariaDB (e.g. `start-stop-daemon --start --oknodo --background --exec"
              + " /usr/sbin/mariadbd -- --user=mysql`, or `bash .ci/run`), or point"
              + " -Dfencing.test.mariadb=jdbc:mariadb://... at one.");
    }
  }

  static void requireRedis() {
    try {
      Servers.checkRedis(REDIS);
    } catch (ServerException e) {
      fail(
          e.getMessage()
              + ". Start Redis (e.g. `redis-server --daemonize yes --port 6379 --save ''`,"
              + " or `bash .ci/run`), or point -Dfencing.test.redis=redis://host:port at one.");
    }
  }

  static String suffix() {
    return Long.toString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE, 36);
  }

  /** A pool and a fresh billing schema of its own; dropped on close. */
  static final class Db implements AutoCloseable {
    final HikariDataSource pool;
    final BillingSchema schema;

    Db(String prefix) {
      this(JDBC, prefix);
    }

    /** On the database at {@code jdbcUrl} (PostgreSQL or MariaDB). */
    Db(String jdbcUrl, String prefix) {
      if (jdbcUrl.equals(MARIADB)) {
        requireMariaDb();
      } else {
        requirePostgres();
      }
      pool = Servers.pool(jdbcUrl, prefix, 12);
      schema = new BillingSchema(pool, prefix + "_" + suffix());
      try {
        schema.migrate();
      } catch (RuntimeException e) {
        try {
          close();
        } catch (SQLException | RuntimeException cleanup) {
          e.addSuppressed(cleanup);
        }
        throw e;
      }
    }

    String name() {
      return schema.schema();
    }

    @Override
    public void close() throws SQLException {
      try {
        schema.drop();
      } finally {
        pool.close();
      }
    }
  }
}
