package dev.fencing.migrations.internal;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.Properties;
import java.util.logging.Logger;
import javax.sql.DataSource;

/** A non-pooling {@link DataSource} over {@link DriverManager}, for the command-line tool. */
public final class DriverManagerDataSource implements DataSource {
  private final String url;
  private final Properties properties = new Properties();
  private int loginTimeoutSeconds;

  /**
   * Creates the data source.
   *
   * @param url JDBC URL
   * @param user user name, or null to leave it to the URL
   * @param password password, or null to leave it to the URL
   */
  public DriverManagerDataSource(String url, String user, String password) {
    this.url = url;
    if (user != null) {
      properties.setProperty("user", user);
    }
    if (password != null) {
      properties.setProperty("password", password);
    }
  }

  @Override
  public Connection getConnection() throws SQLException {
    return DriverManager.getConnection(url, properties);
  }

  @Override
  public Connection getConnection(String username, String password) throws SQLException {
    Properties p = new Properties();
    p.putAll(properties);
    p.setProperty("user", username);
    p.setProperty("password", password);
    return DriverManager.getConnection(url, p);
  }

  @Override
  public PrintWriter getLogWriter() {
    return null;
  }

  @Override
  public void setLogWriter(PrintWriter out) {
    // no logging
  }

  @Override
  public void setLoginTimeout(int seconds) {
    this.loginTimeoutSeconds = seconds;
  }

  @Override
  public int getLoginTimeout() {
    return loginTimeoutSeconds;
  }

  @Override
  public Logger getParentLogger() throws SQLFeatureNotSupportedException {
    throw new SQLFeatureNotSupportedException("no java.util.logging parent logger");
  }

  @Override
  public <T> T unwrap(Class<T> iface) throws SQLException {
    if (iface.isInstance(this)) {
      return iface.cast(this);
    }
    throw new SQLException("not a wrapper for " + iface.getName());
  }

  @Override
  public boolean isWrapperFor(Class<?> iface) {
    return iface.isInstance(this);
  }
}
