package dev.fencing.jdbc.internal;

import java.sql.Array;
import java.sql.Blob;
import java.sql.CallableStatement;
import java.sql.Clob;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.NClob;
import java.sql.PreparedStatement;
import java.sql.SQLClientInfoException;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.SQLXML;
import java.sql.Savepoint;
import java.sql.ShardingKey;
import java.sql.Statement;
import java.sql.Struct;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Executor;

/** A connection that forwards every call to another; subclasses change what they need. */
abstract class ForwardingConnection implements Connection {

  /** The wrapped connection. */
  protected final Connection delegate;

  ForwardingConnection(Connection delegate) {
    this.delegate = delegate;
  }

  @Override
  public void abort(Executor p0) throws SQLException {
    delegate.abort(p0);
  }

  @Override
  public void beginRequest() throws SQLException {
    delegate.beginRequest();
  }

  @Override
  public void clearWarnings() throws SQLException {
    delegate.clearWarnings();
  }

  @Override
  public void close() throws SQLException {
    delegate.close();
  }

  @Override
  public void commit() throws SQLException {
    delegate.commit();
  }

  @Override
  public Array createArrayOf(String p0, Object[] p1) throws SQLException {
    return delegate.createArrayOf(p0, p1);
  }

  @Override
  public Blob createBlob() throws SQLException {
    return delegate.createBlob();
  }

  @Override
  public Clob createClob() throws SQLException {
    return delegate.createClob();
  }

  @Override
  public NClob createNClob() throws SQLException {
    return delegate.createNClob();
  }

  @Override
  public SQLXML createSQLXML() throws SQLException {
    return delegate.createSQLXML();
  }

  @Override
  public Statement createStatement() throws SQLException {
    return delegate.createStatement();
  }

  @Override
  public Statement createStatement(int p0, int p1, int p2) throws SQLException {
    return delegate.createStatement(p0, p1, p2);
  }

  @Override
  public Statement createStatement(int p0, int p1) throws SQLException {
    return delegate.createStatement(p0, p1);
  }

  @Override
  public Struct createStruct(String p0, Object[] p1) throws SQLException {
    return delegate.createStruct(p0, p1);
  }

  @Override
  public void endRequest() throws SQLException {
    delegate.endRequest();
  }

  @Override
  public boolean getAutoCommit() throws SQLException {
    return delegate.getAutoCommit();
  }

  @Override
  public String getCatalog() throws SQLException {
    return delegate.getCatalog();
  }

  @Override
  public Properties getClientInfo() throws SQLException {
    return delegate.getClientInfo();
  }

  @Override
  public String getClientInfo(String p0) throws SQLException {
    return delegate.getClientInfo(p0);
  }

  @Override
  public int getHoldability() throws SQLException {
    return delegate.getHoldability();
  }

  @Override
  public DatabaseMetaData getMetaData() throws SQLException {
    return delegate.getMetaData();
  }

  @Override
  public int getNetworkTimeout() throws SQLException {
    return delegate.getNetworkTimeout();
  }

  @Override
  public String getSchema() throws SQLException {
    return delegate.getSchema();
  }

  @Override
  public int getTransactionIsolation() throws SQLException {
    return delegate.getTransactionIsolation();
  }

  @Override
  public Map<String, Class<?>> getTypeMap() throws SQLException {
    return delegate.getTypeMap();
  }

  @Override
  public SQLWarning getWarnings() throws SQLException {
    return delegate.getWarnings();
  }

  @Override
  public boolean isClosed() throws SQLException {
    return delegate.isClosed();
  }

  @Override
  public boolean isReadOnly() throws SQLException {
    return delegate.isReadOnly();
  }

  @Override
  public boolean isValid(int p0) throws SQLException {
    return delegate.isValid(p0);
  }

  @Override
  public String nativeSQL(String p0) throws SQLException {
    return delegate.nativeSQL(p0);
  }

  @Override
  public CallableStatement prepareCall(String p0, int p1, int p2, int p3) throws SQLException {
    return delegate.prepareCall(p0, p1, p2, p3);
  }

  @Override
  public CallableStatement prepareCall(String p0, int p1, int p2) throws SQLException {
    return delegate.prepareCall(p0, p1, p2);
  }

  @Override
  public CallableStatement prepareCall(String p0) throws SQLException {
    return delegate.prepareCall(p0);
  }

  @Override
  public PreparedStatement prepareStatement(String p0, int[] p1) throws SQLException {
    return delegate.prepareStatement(p0, p1);
  }

  @Override
  public PreparedStatement prepareStatement(String p0, String[] p1) throws SQLException {
    return delegate.prepareStatement(p0, p1);
  }

  @Override
  public PreparedStatement prepareStatement(String p0, int p1, int p2, int p3) throws SQLException {
    return delegate.prepareStatement(p0, p1, p2, p3);
  }

  @Override
  public PreparedStatement prepareStatement(String p0, int p1, int p2) throws SQLException {
    return delegate.prepareStatement(p0, p1, p2);
  }

  @Override
  public PreparedStatement prepareStatement(String p0, int p1) throws SQLException {
    return delegate.prepareStatement(p0, p1);
  }

  @Override
  public PreparedStatement prepareStatement(String p0) throws SQLException {
    return delegate.prepareStatement(p0);
  }

  @Override
  public void releaseSavepoint(Savepoint p0) throws SQLException {
    delegate.releaseSavepoint(p0);
  }

  @Override
  public void rollback() throws SQLException {
    delegate.rollback();
  }

  @Override
  public void rollback(Savepoint p0) throws SQLException {
    delegate.rollback(p0);
  }

  @Override
  public void setAutoCommit(boolean p0) throws SQLException {
    delegate.setAutoCommit(p0);
  }

  @Override
  public void setCatalog(String p0) throws SQLException {
    delegate.setCatalog(p0);
  }

  @Override
  public void setClientInfo(String p0, String p1) throws SQLClientInfoException {
    delegate.setClientInfo(p0, p1);
  }

  @Override
  public void setClientInfo(Properties p0) throws SQLClientInfoException {
    delegate.setClientInfo(p0);
  }

  @Override
  public void setHoldability(int p0) throws SQLException {
    delegate.setHoldability(p0);
  }

  @Override
  public void setNetworkTimeout(Executor p0, int p1) throws SQLException {
    delegate.setNetworkTimeout(p0, p1);
  }

  @Override
  public void setReadOnly(boolean p0) throws SQLException {
    delegate.setReadOnly(p0);
  }

  @Override
  public Savepoint setSavepoint() throws SQLException {
    return delegate.setSavepoint();
  }

  @Override
  public Savepoint setSavepoint(String p0) throws SQLException {
    return delegate.setSavepoint(p0);
  }

  @Override
  public void setSchema(String p0) throws SQLException {
    delegate.setSchema(p0);
  }

  @Override
  public void setShardingKey(ShardingKey p0, ShardingKey p1) throws SQLException {
    delegate.setShardingKey(p0, p1);
  }

  @Override
  public void setShardingKey(ShardingKey p0) throws SQLException {
    delegate.setShardingKey(p0);
  }

  @Override
  public boolean setShardingKeyIfValid(ShardingKey p0, int p1) throws SQLException {
    return delegate.setShardingKeyIfValid(p0, p1);
  }

  @Override
  public boolean setShardingKeyIfValid(ShardingKey p0, ShardingKey p1, int p2) throws SQLException {
    return delegate.setShardingKeyIfValid(p0, p1, p2);
  }

  @Override
  public void setTransactionIsolation(int p0) throws SQLException {
    delegate.setTransactionIsolation(p0);
  }

  @Override
  public void setTypeMap(Map<String, Class<?>> p0) throws SQLException {
    delegate.setTypeMap(p0);
  }
}
