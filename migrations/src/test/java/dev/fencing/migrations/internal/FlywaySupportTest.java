package dev.fencing.migrations.internal;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.migrations.FencingMigrationException;
import org.junit.jupiter.api.Test;

class FlywaySupportTest {
  @Test
  void shouldNameTheMissingArtifactWhenFlywaysDatabaseModuleIsAbsent() {
    assertThatThrownBy(
            () ->
                FlywaySupport.require(
                    "PostgreSQL",
                    "org.flywaydb.database.absent.AbsentDatabaseType",
                    "org.flywaydb:flyway-database-postgresql"))
        .isInstanceOf(FencingMigrationException.class)
        .hasMessageContaining("Flyway's PostgreSQL support is not on the class path")
        .hasMessageContaining("add the dependency org.flywaydb:flyway-database-postgresql")
        .hasCauseInstanceOf(ClassNotFoundException.class);
  }

  @Test
  void shouldPassWhenTheModulesAreOnTheClassPath() {
    assertThatCode(FlywaySupport.POSTGRESQL::require).doesNotThrowAnyException();
    assertThatCode(FlywaySupport.MARIADB::require).doesNotThrowAnyException();
  }
}
