package dev.fencing.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.PreparedStatement;
import org.junit.jupiter.api.Test;

/** The stale-writer probe on PostgreSQL, including the enforcement trigger. */
class PostgresStaleWriterProbeTest extends StaleWriterProbeContract {

  @Override
  ProbeDatabase newDatabase() {
    return ProbeDatabase.postgres();
  }

  @Override
  Class<? extends Connection> driverConnection() {
    return org.postgresql.core.BaseConnection.class;
  }

  @Test
  void plainSqlThroughTheFencedDataSourceIsGuardedByTheRewriter() {
    ProbeDatabase d = database();
    ProbeReport report = d.probe(d.db).run(as -> addToBalance(d.db::getConnection, 10));

    assertThat(report.fenced()).as(report.describe()).isTrue();
  }

  @Test
  void plainSqlInTriggerModeOnAnEnforcedTableIsFenced() {
    ProbeDatabase d = database();
    d.probe(d.triggerDb)
        .check(
            as -> {
              try (Connection c = d.triggerDb.getConnection();
                  PreparedStatement s =
                      c.prepareStatement(
                          "UPDATE " + d.table("audited") + " SET note = ? WHERE id = 1")) {
                s.setString(1, "note-" + as);
                s.executeUpdate();
              }
            });
  }

  @Test
  void theStrictTriggerRefusesARawConnectionButTheLeaseIsNotMarkedLost() {
    ProbeDatabase d = database();
    ProbeReport report =
        d.probe(d.triggerDb)
            .run(
                as -> {
                  // the first and last runs go through the wrapper; the stale one around it
                  javax.sql.DataSource from =
                      as == StaleWriterProbe.Holder.STALE_HOLDER ? d.pool : d.triggerDb;
                  try (Connection c = from.getConnection();
                      PreparedStatement s =
                          c.prepareStatement(
                              "UPDATE " + d.table("audited") + " SET note = ? WHERE id = 1")) {
                    s.setString(1, "note-" + as);
                    s.executeUpdate();
                  }
                });

    assertThat(report.fenced()).isFalse();
    assertThat(report.changedTables()).isEmpty();
    assertThat(report.findings()).hasSize(1);
    assertThat(report.describe()).contains("still believed held").contains("unwrap()");
  }
}
