package dev.fencing.jdbc.internal;

import java.io.InputStream;
import java.io.Reader;
import java.math.BigDecimal;
import java.net.URL;
import java.sql.Array;
import java.sql.Blob;
import java.sql.Clob;
import java.sql.Date;
import java.sql.NClob;
import java.sql.PreparedStatement;
import java.sql.Ref;
import java.sql.RowId;
import java.sql.SQLException;
import java.sql.SQLType;
import java.sql.SQLXML;
import java.sql.Time;
import java.sql.Timestamp;
import java.util.Calendar;

/**
 * A prepared statement of a fenced connection whose parameter assignments go through {@link #bind},
 * so that a subclass can replay them onto a second form of the statement.
 */
abstract class BindingPreparedStatement extends FencedPreparedStatement<PreparedStatement> {

  /** One parameter assignment, replayable onto another statement with the same parameters. */
  @FunctionalInterface
  interface Binding {
    void apply(PreparedStatement statement) throws SQLException;
  }

  BindingPreparedStatement(
      FencedConnection connection, PreparedStatement delegate, boolean controlsTransaction) {
    super(connection, delegate, controlsTransaction);
  }

  /** Applies one parameter assignment (to the wrapped statement, and wherever else it must go). */
  abstract void bind(int index, Binding binding) throws SQLException;

  @Override
  public void setArray(int p0, Array p1) throws SQLException {
    bind(p0, s -> s.setArray(p0, p1));
  }

  @Override
  public void setAsciiStream(int p0, InputStream p1, int p2) throws SQLException {
    bind(p0, s -> s.setAsciiStream(p0, p1, p2));
  }

  @Override
  public void setAsciiStream(int p0, InputStream p1, long p2) throws SQLException {
    bind(p0, s -> s.setAsciiStream(p0, p1, p2));
  }

  @Override
  public void setAsciiStream(int p0, InputStream p1) throws SQLException {
    bind(p0, s -> s.setAsciiStream(p0, p1));
  }

  @Override
  public void setBigDecimal(int p0, BigDecimal p1) throws SQLException {
    bind(p0, s -> s.setBigDecimal(p0, p1));
  }

  @Override
  public void setBinaryStream(int p0, InputStream p1, int p2) throws SQLException {
    bind(p0, s -> s.setBinaryStream(p0, p1, p2));
  }

  @Override
  public void setBinaryStream(int p0, InputStream p1, long p2) throws SQLException {
    bind(p0, s -> s.setBinaryStream(p0, p1, p2));
  }

  @Override
  public void setBinaryStream(int p0, InputStream p1) throws SQLException {
    bind(p0, s -> s.setBinaryStream(p0, p1));
  }

  @Override
  public void setBlob(int p0, InputStream p1, long p2) throws SQLException {
    bind(p0, s -> s.setBlob(p0, p1, p2));
  }

  @Override
  public void setBlob(int p0, InputStream p1) throws SQLException {
    bind(p0, s -> s.setBlob(p0, p1));
  }

  @Override
  public void setBlob(int p0, Blob p1) throws SQLException {
    bind(p0, s -> s.setBlob(p0, p1));
  }

  @Override
  public void setBoolean(int p0, boolean p1) throws SQLException {
    bind(p0, s -> s.setBoolean(p0, p1));
  }

  @Override
  public void setByte(int p0, byte p1) throws SQLException {
    bind(p0, s -> s.setByte(p0, p1));
  }

  @Override
  public void setBytes(int p0, byte[] p1) throws SQLException {
    bind(p0, s -> s.setBytes(p0, p1));
  }

  @Override
  public void setCharacterStream(int p0, Reader p1, int p2) throws SQLException {
    bind(p0, s -> s.setCharacterStream(p0, p1, p2));
  }

  @Override
  public void setCharacterStream(int p0, Reader p1, long p2) throws SQLException {
    bind(p0, s -> s.setCharacterStream(p0, p1, p2));
  }

  @Override
  public void setCharacterStream(int p0, Reader p1) throws SQLException {
    bind(p0, s -> s.setCharacterStream(p0, p1));
  }

  @Override
  public void setClob(int p0, Reader p1, long p2) throws SQLException {
    bind(p0, s -> s.setClob(p0, p1, p2));
  }

  @Override
  public void setClob(int p0, Reader p1) throws SQLException {
    bind(p0, s -> s.setClob(p0, p1));
  }

  @Override
  public void setClob(int p0, Clob p1) throws SQLException {
    bind(p0, s -> s.setClob(p0, p1));
  }

  @Override
  public void setDate(int p0, Date p1, Calendar p2) throws SQLException {
    bind(p0, s -> s.setDate(p0, p1, p2));
  }

  @Override
  public void setDate(int p0, Date p1) throws SQLException {
    bind(p0, s -> s.setDate(p0, p1));
  }

  @Override
  public void setDouble(int p0, double p1) throws SQLException {
    bind(p0, s -> s.setDouble(p0, p1));
  }

  @Override
  public void setFloat(int p0, float p1) throws SQLException {
    bind(p0, s -> s.setFloat(p0, p1));
  }

  @Override
  public void setInt(int p0, int p1) throws SQLException {
    bind(p0, s -> s.setInt(p0, p1));
  }

  @Override
  public void setLong(int p0, long p1) throws SQLException {
    bind(p0, s -> s.setLong(p0, p1));
  }

  @Override
  public void setNCharacterStream(int p0, Reader p1, long p2) throws SQLException {
    bind(p0, s -> s.setNCharacterStream(p0, p1, p2));
  }

  @Override
  public void setNCharacterStream(int p0, Reader p1) throws SQLException {
    bind(p0, s -> s.setNCharacterStream(p0, p1));
  }

  @Override
  public void setNClob(int p0, Reader p1, long p2) throws SQLException {
    bind(p0, s -> s.setNClob(p0, p1, p2));
  }

  @Override
  public void setNClob(int p0, Reader p1) throws SQLException {
    bind(p0, s -> s.setNClob(p0, p1));
  }

  @Override
  public void setNClob(int p0, NClob p1) throws SQLException {
    bind(p0, s -> s.setNClob(p0, p1));
  }

  @Override
  public void setNString(int p0, String p1) throws SQLException {
    bind(p0, s -> s.setNString(p0, p1));
  }

  @Override
  public void setNull(int p0, int p1, String p2) throws SQLException {
    bind(p0, s -> s.setNull(p0, p1, p2));
  }

  @Override
  public void setNull(int p0, int p1) throws SQLException {
    bind(p0, s -> s.setNull(p0, p1));
  }

  @Override
  public void setObject(int p0, Object p1, int p2, int p3) throws SQLException {
    bind(p0, s -> s.setObject(p0, p1, p2, p3));
  }

  @Override
  public void setObject(int p0, Object p1, int p2) throws SQLException {
    bind(p0, s -> s.setObject(p0, p1, p2));
  }

  @Override
  public void setObject(int p0, Object p1, SQLType p2, int p3) throws SQLException {
    bind(p0, s -> s.setObject(p0, p1, p2, p3));
  }

  @Override
  public void setObject(int p0, Object p1, SQLType p2) throws SQLException {
    bind(p0, s -> s.setObject(p0, p1, p2));
  }

  @Override
  public void setObject(int p0, Object p1) throws SQLException {
    bind(p0, s -> s.setObject(p0, p1));
  }

  @Override
  public void setRef(int p0, Ref p1) throws SQLException {
    bind(p0, s -> s.setRef(p0, p1));
  }

  @Override
  public void setRowId(int p0, RowId p1) throws SQLException {
    bind(p0, s -> s.setRowId(p0, p1));
  }

  @Override
  public void setSQLXML(int p0, SQLXML p1) throws SQLException {
    bind(p0, s -> s.setSQLXML(p0, p1));
  }

  @Override
  public void setShort(int p0, short p1) throws SQLException {
    bind(p0, s -> s.setShort(p0, p1));
  }

  @Override
  public void setString(int p0, String p1) throws SQLException {
    bind(p0, s -> s.setString(p0, p1));
  }

  @Override
  public void setTime(int p0, Time p1, Calendar p2) throws SQLException {
    bind(p0, s -> s.setTime(p0, p1, p2));
  }

  @Override
  public void setTime(int p0, Time p1) throws SQLException {
    bind(p0, s -> s.setTime(p0, p1));
  }

  @Override
  public void setTimestamp(int p0, Timestamp p1, Calendar p2) throws SQLException {
    bind(p0, s -> s.setTimestamp(p0, p1, p2));
  }

  @Override
  public void setTimestamp(int p0, Timestamp p1) throws SQLException {
    bind(p0, s -> s.setTimestamp(p0, p1));
  }

  @Override
  public void setURL(int p0, URL p1) throws SQLException {
    bind(p0, s -> s.setURL(p0, p1));
  }

  @Deprecated
  @Override
  public void setUnicodeStream(int p0, InputStream p1, int p2) throws SQLException {
    bind(p0, s -> s.setUnicodeStream(p0, p1, p2));
  }
}
