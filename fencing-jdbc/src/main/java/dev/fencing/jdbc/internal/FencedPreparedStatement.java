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
import java.sql.ParameterMetaData;
import java.sql.PreparedStatement;
import java.sql.Ref;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.RowId;
import java.sql.SQLException;
import java.sql.SQLType;
import java.sql.SQLXML;
import java.sql.Time;
import java.sql.Timestamp;
import java.util.Calendar;

/**
 * A prepared statement of a fenced connection.
 *
 * @param <S> the wrapped statement's type
 */
public class FencedPreparedStatement<S extends PreparedStatement> extends FencedStatement<S>
    implements PreparedStatement {

  FencedPreparedStatement(FencedConnection connection, S delegate, boolean controlsTransaction) {
    super(connection, delegate, controlsTransaction);
  }

  @Override
  public void addBatch() throws SQLException {
    delegate.addBatch();
  }

  @Override
  public void clearParameters() throws SQLException {
    delegate.clearParameters();
  }

  @Override
  public boolean execute() throws SQLException {
    return execution(() -> delegate.execute());
  }

  @Override
  public long executeLargeUpdate() throws SQLException {
    return execution(() -> delegate.executeLargeUpdate());
  }

  @Override
  public ResultSet executeQuery() throws SQLException {
    return execution(() -> delegate.executeQuery());
  }

  @Override
  public int executeUpdate() throws SQLException {
    return execution(() -> delegate.executeUpdate());
  }

  @Override
  public ResultSetMetaData getMetaData() throws SQLException {
    return delegate.getMetaData();
  }

  @Override
  public ParameterMetaData getParameterMetaData() throws SQLException {
    return delegate.getParameterMetaData();
  }

  @Override
  public void setArray(int p0, Array p1) throws SQLException {
    delegate.setArray(p0, p1);
  }

  @Override
  public void setAsciiStream(int p0, InputStream p1, int p2) throws SQLException {
    delegate.setAsciiStream(p0, p1, p2);
  }

  @Override
  public void setAsciiStream(int p0, InputStream p1, long p2) throws SQLException {
    delegate.setAsciiStream(p0, p1, p2);
  }

  @Override
  public void setAsciiStream(int p0, InputStream p1) throws SQLException {
    delegate.setAsciiStream(p0, p1);
  }

  @Override
  public void setBigDecimal(int p0, BigDecimal p1) throws SQLException {
    delegate.setBigDecimal(p0, p1);
  }

  @Override
  public void setBinaryStream(int p0, InputStream p1, int p2) throws SQLException {
    delegate.setBinaryStream(p0, p1, p2);
  }

  @Override
  public void setBinaryStream(int p0, InputStream p1, long p2) throws SQLException {
    delegate.setBinaryStream(p0, p1, p2);
  }

  @Override
  public void setBinaryStream(int p0, InputStream p1) throws SQLException {
    delegate.setBinaryStream(p0, p1);
  }

  @Override
  public void setBlob(int p0, InputStream p1, long p2) throws SQLException {
    delegate.setBlob(p0, p1, p2);
  }

  @Override
  public void setBlob(int p0, InputStream p1) throws SQLException {
    delegate.setBlob(p0, p1);
  }

  @Override
  public void setBlob(int p0, Blob p1) throws SQLException {
    delegate.setBlob(p0, p1);
  }

  @Override
  public void setBoolean(int p0, boolean p1) throws SQLException {
    delegate.setBoolean(p0, p1);
  }

  @Override
  public void setByte(int p0, byte p1) throws SQLException {
    delegate.setByte(p0, p1);
  }

  @Override
  public void setBytes(int p0, byte[] p1) throws SQLException {
    delegate.setBytes(p0, p1);
  }

  @Override
  public void setCharacterStream(int p0, Reader p1, int p2) throws SQLException {
    delegate.setCharacterStream(p0, p1, p2);
  }

  @Override
  public void setCharacterStream(int p0, Reader p1, long p2) throws SQLException {
    delegate.setCharacterStream(p0, p1, p2);
  }

  @Override
  public void setCharacterStream(int p0, Reader p1) throws SQLException {
    delegate.setCharacterStream(p0, p1);
  }

  @Override
  public void setClob(int p0, Reader p1, long p2) throws SQLException {
    delegate.setClob(p0, p1, p2);
  }

  @Override
  public void setClob(int p0, Reader p1) throws SQLException {
    delegate.setClob(p0, p1);
  }

  @Override
  public void setClob(int p0, Clob p1) throws SQLException {
    delegate.setClob(p0, p1);
  }

  @Override
  public void setDate(int p0, Date p1, Calendar p2) throws SQLException {
    delegate.setDate(p0, p1, p2);
  }

  @Override
  public void setDate(int p0, Date p1) throws SQLException {
    delegate.setDate(p0, p1);
  }

  @Override
  public void setDouble(int p0, double p1) throws SQLException {
    delegate.setDouble(p0, p1);
  }

  @Override
  public void setFloat(int p0, float p1) throws SQLException {
    delegate.setFloat(p0, p1);
  }

  @Override
  public void setInt(int p0, int p1) throws SQLException {
    delegate.setInt(p0, p1);
  }

  @Override
  public void setLong(int p0, long p1) throws SQLException {
    delegate.setLong(p0, p1);
  }

  @Override
  public void setNCharacterStream(int p0, Reader p1, long p2) throws SQLException {
    delegate.setNCharacterStream(p0, p1, p2);
  }

  @Override
  public void setNCharacterStream(int p0, Reader p1) throws SQLException {
    delegate.setNCharacterStream(p0, p1);
  }

  @Override
  public void setNClob(int p0, Reader p1, long p2) throws SQLException {
    delegate.setNClob(p0, p1, p2);
  }

  @Override
  public void setNClob(int p0, Reader p1) throws SQLException {
    delegate.setNClob(p0, p1);
  }

  @Override
  public void setNClob(int p0, NClob p1) throws SQLException {
    delegate.setNClob(p0, p1);
  }

  @Override
  public void setNString(int p0, String p1) throws SQLException {
    delegate.setNString(p0, p1);
  }

  @Override
  public void setNull(int p0, int p1, String p2) throws SQLException {
    delegate.setNull(p0, p1, p2);
  }

  @Override
  public void setNull(int p0, int p1) throws SQLException {
    delegate.setNull(p0, p1);
  }

  @Override
  public void setObject(int p0, Object p1, int p2, int p3) throws SQLException {
    delegate.setObject(p0, p1, p2, p3);
  }

  @Override
  public void setObject(int p0, Object p1, int p2) throws SQLException {
    delegate.setObject(p0, p1, p2);
  }

  @Override
  public void setObject(int p0, Object p1, SQLType p2, int p3) throws SQLException {
    delegate.setObject(p0, p1, p2, p3);
  }

  @Override
  public void setObject(int p0, Object p1, SQLType p2) throws SQLException {
    delegate.setObject(p0, p1, p2);
  }

  @Override
  public void setObject(int p0, Object p1) throws SQLException {
    delegate.setObject(p0, p1);
  }

  @Override
  public void setRef(int p0, Ref p1) throws SQLException {
    delegate.setRef(p0, p1);
  }

  @Override
  public void setRowId(int p0, RowId p1) throws SQLException {
    delegate.setRowId(p0, p1);
  }

  @Override
  public void setSQLXML(int p0, SQLXML p1) throws SQLException {
    delegate.setSQLXML(p0, p1);
  }

  @Override
  public void setShort(int p0, short p1) throws SQLException {
    delegate.setShort(p0, p1);
  }

  @Override
  public void setString(int p0, String p1) throws SQLException {
    delegate.setString(p0, p1);
  }

  @Override
  public void setTime(int p0, Time p1, Calendar p2) throws SQLException {
    delegate.setTime(p0, p1, p2);
  }

  @Override
  public void setTime(int p0, Time p1) throws SQLException {
    delegate.setTime(p0, p1);
  }

  @Override
  public void setTimestamp(int p0, Timestamp p1, Calendar p2) throws SQLException {
    delegate.setTimestamp(p0, p1, p2);
  }

  @Override
  public void setTimestamp(int p0, Timestamp p1) throws SQLException {
    delegate.setTimestamp(p0, p1);
  }

  @Override
  public void setURL(int p0, URL p1) throws SQLException {
    delegate.setURL(p0, p1);
  }

  @Deprecated
  @Override
  public void setUnicodeStream(int p0, InputStream p1, int p2) throws SQLException {
    delegate.setUnicodeStream(p0, p1, p2);
  }
}
