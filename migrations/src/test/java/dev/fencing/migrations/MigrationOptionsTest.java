package dev.fencing.migrations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.PrintWriter;
import java.sql.Connection;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class MigrationOptionsTest {

  @ParameterizedTest
  @ValueSource(
      strings = {
        "invoices; DROP TABLE users",
        "\"invoices\"",
        "public.\"x\"",
        "my table",
        "",
        " ",
        "a.b.c",
        ".invoices",
        "public.",
        "1invoices",
        "invoices--",
        "inv'oices",
        "invoices)",
        "ünïcode",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
      })
  void shouldRefuseInjectionAttemptsInTableNamesBeforeTouchingTheDatabase(String bad) {
    CountingDataSource ds = new CountingDataSource();
    assertThatThrownBy(
            () -> FencingMigrations.migrate(ds, MigrationOptions.builder().fence(bad).build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'" + bad + "'");
    assertThatThrownBy(
            () ->
                MigrationOptions.builder().fence("ok").enforce(bad, EnforcementMode.STRICT).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'" + bad + "'");
    assertThat(ds.connections.get()).isZero();
  }

  @Test
  void shouldRefuseNullTableName() {
    assertThatThrownBy(() -> MigrationOptions.builder().fence((String) null).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("null");
  }

  @ParameterizedTest
  @ValueSource(strings = {"fencing; DROP SCHEMA public", "a.b", "\"f\"", "", "f g", "9f"})
  void shouldRefuseInjectionAttemptsInSchemaNameBeforeTouchingTheDatabase(String bad) {
    CountingDataSource ds = new CountingDataSource();
    assertThatThrownBy(() -> MigrationOptions.builder().schema(bad).fence("t").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("schema name must be a plain identifier")
        .hasMessageContaining("'" + bad + "'");
    assertThatThrownBy(() -> FencingMigrations.flywayConfiguration(ds, bad))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'" + bad + "'");
    assertThat(ds.connections.get()).isZero();
  }

  @Test
  void shouldRefuseNullSchema() {
    assertThatThrownBy(() -> MigrationOptions.builder().schema(null).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("null");
  }

  @Test
  void shouldRefuseNonPositiveBounds() {
    assertThatThrownBy(() -> MigrationOptions.builder().lockTimeout(Duration.ZERO).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("lockTimeout");
    assertThatThrownBy(() -> MigrationOptions.builder().maxAttempts(0).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxAttempts");
    assertThatThrownBy(() -> MigrationOptions.builder().maxTotalWait(Duration.ofMillis(-1)).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxTotalWait");
  }

  @Test
  void shouldUseDocumentedDefaultsAndBeImmutable() {
    MigrationOptions o =
        MigrationOptions.builder()
            .fence("public.invoices", "charges")
            .enforce("public.charges", EnforcementMode.LENIENT)
            .build();
    assertThat(o.schema()).isEqualTo("fencing");
    assertThat(o.lockTimeout()).isEqualTo(Duration.ofMillis(200));
    assertThat(o.maxAttempts()).isEqualTo(50);
    assertThat(o.maxTotalWait()).isEqualTo(Duration.ofSeconds(30));
    assertThat(o.fencedTables()).containsExactly("public.invoices", "charges");
    assertThat(o.enforcedTables())
        .containsExactly(Map.entry("public.charges", EnforcementMode.LENIENT));
    assertThatThrownBy(() -> o.fencedTables().add("x"))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> o.enforcedTables().put("x", EnforcementMode.STRICT))
        .isInstanceOf(UnsupportedOperationException.class);
  }

  /** Counts connection requests; never returns one. */
  static final class CountingDataSource implements DataSource {
    final AtomicInteger connections = new AtomicInteger();

    @Override
    public Connection getConnection() {
      connections.incrementAndGet();
      throw new AssertionError("the database must not be touched");
    }

    @Override
    public Connection getConnection(String u, String p) {
      return getConnection();
    }

    @Override
    public PrintWriter getLogWriter() {
      return null;
    }

    @Override
    public void setLogWriter(PrintWriter out) {}

    @Override
    public void setLoginTimeout(int seconds) {}

    @Override
    public int getLoginTimeout() {
      return 0;
    }

    @Override
    public Logger getParentLogger() {
      return Logger.getGlobal();
    }

    @Override
    public <T> T unwrap(Class<T> iface) {
      throw new UnsupportedOperationException();
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) {
      return false;
    }
  }

  @Test
  void shouldAcceptTheExactEdgesOfEachBoundAndRefuseTheNextValue() {
    Duration nano = Duration.ofNanos(1);
    assertThat(MigrationOptions.builder().lockTimeout(Duration.ofMillis(1)).build().lockTimeout())
        .isEqualTo(Duration.ofMillis(1));
    assertThat(MigrationOptions.builder().lockTimeout(Duration.ofMinutes(10)).build().lockTimeout())
        .isEqualTo(Duration.ofMinutes(10));
    assertThat(MigrationOptions.builder().maxAttempts(1).build().maxAttempts()).isEqualTo(1);
    assertThatThrownBy(
            () -> MigrationOptions.builder().lockTimeout(Duration.ofMillis(1).minus(nano)).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at least 1 ms");
    assertThatThrownBy(
            () -> MigrationOptions.builder().lockTimeout(Duration.ofMinutes(10).plus(nano)).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at most 10 minutes");
    assertThatThrownBy(() -> MigrationOptions.builder().maxAttempts(0).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxAttempts");
  }
}
