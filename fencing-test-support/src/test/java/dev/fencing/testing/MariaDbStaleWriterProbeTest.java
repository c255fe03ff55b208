package dev.fencing.testing;

import java.sql.Connection;

/** The stale-writer probe on MariaDB. */
class MariaDbStaleWriterProbeTest extends StaleWriterProbeContract {

  @Override
  ProbeDatabase newDatabase() {
    return ProbeDatabase.mariaDb();
  }

  @Override
  Class<? extends Connection> driverConnection() {
    return org.mariadb.jdbc.Connection.class;
  }
}
