package dev.fencing.jdbc.internal;

import java.io.InputStream;
import java.io.Reader;
import java.math.BigDecimal;
import java.net.URL;
import java.sql.Array;
import java.sql.Blob;
import java.sql.CallableStatement;
import java.sql.Clob;
import java.sql.Date;
import java.sql.NClob;
import java.sql.Ref;
import java.sql.RowId;
import java.sql.SQLException;
import java.sql.SQLType;
import java.sql.SQLXML;
import java.sql.Time;
import java.sql.Timestamp;
import java.util.Calendar;
import java.util.Map;

/** A callable statement of a fenced connection. */
public class FencedCallableStatement extends FencedPreparedStatement<CallableStatement>
    implements CallableStatement {

  FencedCallableStatement(
      FencedConnection connection, CallableStatement delegate, boolean controlsTransaction) {
    super(connection, delegate, controlsTransaction);
  }

  @Override
  public Array getArray(String p0) throws SQLException {
    return delegate.getArray(p0);
  }

  @Override
  public Array getArray(int p0) throws SQLException {
    return delegate.getArray(p0);
  }

  @Override
  public BigDecimal getBigDecimal(String p0) throws SQLException {
    return delegate.getBigDecimal(p0);
  }

  @Deprecated
  @Override
  public BigDecimal getBigDecimal(int p0, int p1) throws SQLException {
    return delegate.getBigDecimal(p0, p1);
  }

  @Override
  public BigDecimal getBigDecimal(int p0) throws SQLException {
    return delegate.getBigDecimal(p0);
  }

  @Override
  public Blob getBlob(String p0) throws SQLException {
    return delegate.getBlob(p0);
  }

  @Override
  public Blob getBlob(int p0) throws SQLException {
    return delegate.getBlob(p0);
  }

  @Override
  public boolean getBoolean(String p0) throws SQLException {
    return delegate.getBoolean(p0);
  }

  @Override
  public boolean getBoolean(int p0) throws SQLException {
    return delegate.getBoolean(p0);
  }

  @Override
  public byte getByte(String p0) throws SQLException {
    return delegate.getByte(p0);
  }

  @Override
  public byte getByte(int p0) throws SQLException {
    return delegate.getByte(p0);
  }

  @Override
  public byte[] getBytes(String p0) throws SQLException {
    return delegate.getBytes(p0);
  }

  @Override
  public byte[] getBytes(int p0) throws SQLException {
    return delegate.getBytes(p0);
  }

  @Override
  public Reader getCharacterStream(String p0) throws SQLException {
    return delegate.getCharacterStream(p0);
  }

  @Override
  public Reader getCharacterStream(int p0) throws SQLException {
    return delegate.getCharacterStream(p0);
  }

  @Override
  public Clob getClob(String p0) throws SQLException {
    return delegate.getClob(p0);
  }

  @Override
  public Clob getClob(int p0) throws SQLException {
    return delegate.getClob(p0);
  }

  @Override
  public Date getDate(String p0, Calendar p1) throws SQLException {
    return delegate.getDate(p0, p1);
  }

  @Override
  public Date getDate(String p0) throws SQLException {
    return delegate.getDate(p0);
  }

  @Override
  public Date getDate(int p0, Calendar p1) throws SQLException {
    return delegate.getDate(p0, p1);
  }

  @Override
  public Date getDate(int p0) throws SQLException {
    return delegate.getDate(p0);
  }

  @Override
  public double getDouble(String p0) throws SQLException {
    return delegate.getDouble(p0);
  }

  @Override
  public double getDouble(int p0) throws SQLException {
    return delegate.getDouble(p0);
  }

  @Override
  public float getFloat(String p0) throws SQLException {
    return delegate.getFloat(p0);
  }

  @Override
  public float getFloat(int p0) throws SQLException {
    return delegate.getFloat(p0);
  }

  @Override
  public int getInt(String p0) throws SQLException {
    return delegate.getInt(p0);
  }

  @Override
  public int getInt(int p0) throws SQLException {
    return delegate.getInt(p0);
  }

  @Override
  public long getLong(String p0) throws SQLException {
    return delegate.getLong(p0);
  }

  @Override
  public long getLong(int p0) throws SQLException {
    return delegate.getLong(p0);
  }

  @Override
  public Reader getNCharacterStream(String p0) throws SQLException {
    return delegate.getNCharacterStream(p0);
  }

  @Override
  public Reader getNCharacterStream(int p0) throws SQLException {
    return delegate.getNCharacterStream(p0);
  }

  @Override
  public NClob getNClob(String p0) throws SQLException {
    return delegate.getNClob(p0);
  }

  @Override
  public NClob getNClob(int p0) throws SQLException {
    return delegate.getNClob(p0);
  }

  @Override
  public String getNString(String p0) throws SQLException {
    return delegate.getNString(p0);
  }

  @Override
  public String getNString(int p0) throws SQLException {
    return delegate.getNString(p0);
  }

  @Override
  public <T> T getObject(String p0, Class<T> p1) throws SQLException {
    return delegate.getObject(p0, p1);
  }

  @Override
  public Object getObject(String p0, Map<String, Class<?>> p1) throws SQLException {
    return delegate.getObject(p0, p1);
  }

  @Override
  public Object getObject(String p0) throws SQLException {
    return delegate.getObject(p0);
  }

  @Override
  public <T> T getObject(int p0, Class<T> p1) throws SQLException {
    return delegate.getObject(p0, p1);
  }

  @Override
  public Object getObject(int p0, Map<String, Class<?>> p1) throws SQLException {
    return delegate.getObject(p0, p1);
  }

  @Override
  public Object getObject(int p0) throws SQLException {
    return delegate.getObject(p0);
  }

  @Override
  public Ref getRef(String p0) throws SQLException {
    return delegate.getRef(p0);
  }

  @Override
  public Ref getRef(int p0) throws SQLException {
    return delegate.getRef(p0);
  }

  @Override
  public RowId getRowId(String p0) throws SQLException {
    return delegate.getRowId(p0);
  }

  @Override
  public RowId getRowId(int p0) throws SQLException {
    return delegate.getRowId(p0);
  }

  @Override
  public SQLXML getSQLXML(String p0) throws SQLException {
    return delegate.getSQLXML(p0);
  }

  @Override
  public SQLXML getSQLXML(int p0) throws SQLException {
    return delegate.getSQLXML(p0);
  }

  @Override
  public short getShort(String p0) throws SQLException {
    return delegate.getShort(p0);
  }

  @Override
  public short getShort(int p0) throws SQLException {
    return delegate.getShort(p0);
  }

  @Override
  public String getString(String p0) throws SQLException {
    return delegate.getString(p0);
  }

  @Override
  public String getString(int p0) throws SQLException {
    return delegate.getString(p0);
  }

  @Override
  public Time getTime(String p0, Calendar p1) throws SQLException {
    return delegate.getTime(p0, p1);
  }

  @Override
  public Time getTime(String p0) throws SQLException {
    return delegate.getTime(p0);
  }

  @Override
  public Time getTime(int p0, Calendar p1) throws SQLException {
    return delegate.getTime(p0, p1);
  }

  @Override
  public Time getTime(int p0) throws SQLException {
    return delegate.getTime(p0);
  }

  @Override
  public Timestamp getTimestamp(String p0, Calendar p1) throws SQLException {
    return delegate.getTimestamp(p0, p1);
  }

  @Override
  public Timestamp getTimestamp(String p0) throws SQLException {
    return delegate.getTimestamp(p0);
  }

  @Override
  public Timestamp getTimestamp(int p0, Calendar p1) throws SQLException {
    return delegate.getTimestamp(p0, p1);
  }

  @Override
  public Timestamp getTimestamp(int p0) throws SQLException {
    return delegate.getTimestamp(p0);
  }

  @Override
  public URL getURL(String p0) throws SQLException {
    return delegate.getURL(p0);
  }

  @Override
  public URL getURL(int p0) throws SQLException {
    return delegate.getURL(p0);
  }

  @Override
  public void registerOutParameter(String p0, int p1, String p2) throws SQLException {
    delegate.registerOutParameter(p0, p1, p2);
  }

  @Override
  public void registerOutParameter(String p0, int p1, int p2) throws SQLException {
    delegate.registerOutParameter(p0, p1, p2);
  }

  @Override
  public void registerOutParameter(String p0, int p1) throws SQLException {
    delegate.registerOutParameter(p0, p1);
  }

  @Override
  public void registerOutParameter(String p0, SQLType p1, String p2) throws SQLException {
    delegate.registerOutParameter(p0, p1, p2);
  }

  @Override
  public void registerOutParameter(String p0, SQLType p1, int p2) throws SQLException {
    delegate.registerOutParameter(p0, p1, p2);
  }

  @Override
  public void registerOutParameter(String p0, SQLType p1) throws SQLException {
    delegate.registerOutParameter(p0, p1);
  }

  @Override
  public void registerOutParameter(int p0, int p1, String p2) throws SQLException {
    delegate.registerOutParameter(p0, p1, p2);
  }

  @Override
  public void registerOutParameter(int p0, int p1, int p2) throws SQLException {
    delegate.registerOutParameter(p0, p1, p2);
  }

  @Override
  public void registerOutParameter(int p0, int p1) throws SQLException {
    delegate.registerOutParameter(p0, p1);
  }

  @Override
  public void registerOutParameter(int p0, SQLType p1, String p2) throws SQLException {
    delegate.registerOutParameter(p0, p1, p2);
  }

  @Override
  public void registerOutParameter(int p0, SQLType p1, int p2) throws SQLException {
    delegate.registerOutParameter(p0, p1, p2);
  }

  @Override
  public void registerOutParameter(int p0, SQLType p1) throws SQLException {
    delegate.registerOutParameter(p0, p1);
  }

  @Override
  public void setAsciiStream(String p0, InputStream p1, int p2) throws SQLException {
    delegate.setAsciiStream(p0, p1, p2);
  }

  @Override
  public void setAsciiStream(String p0, InputStream p1, long p2) throws SQLException {
    delegate.setAsciiStream(p0, p1, p2);
  }

  @Override
  public void setAsciiStream(String p0, InputStream p1) throws SQLException {
    delegate.setAsciiStream(p0, p1);
  }

  @Override
  public void setBigDecimal(String p0, BigDecimal p1) throws SQLException {
    delegate.setBigDecimal(p0, p1);
  }

  @Override
  public void setBinaryStream(String p0, InputStream p1, int p2) throws SQLException {
    delegate.setBinaryStream(p0, p1, p2);
  }

  @Override
  public void setBinaryStream(String p0, InputStream p1, long p2) throws SQLException {
    delegate.setBinaryStream(p0, p1, p2);
  }

  @Override
  public void setBinaryStream(String p0, InputStream p1) throws SQLException {
    delegate.setBinaryStream(p0, p1);
  }

  @Override
  public void setBlob(String p0, InputStream p1, long p2) throws SQLException {
    delegate.setBlob(p0, p1, p2);
  }

  @Override
  public void setBlob(String p0, InputStream p1) throws SQLException {
    delegate.setBlob(p0, p1);
  }

  @Override
  public void setBlob(String p0, Blob p1) throws SQLException {
    delegate.setBlob(p0, p1);
  }

  @Override
  public void setBoolean(String p0, boolean p1) throws SQLException {
    delegate.setBoolean(p0, p1);
  }

  @Override
  public void setByte(String p0, byte p1) throws SQLException {
    delegate.setByte(p0, p1);
  }

  @Override
  public void setBytes(String p0, byte[] p1) throws SQLException {
    delegate.setBytes(p0, p1);
  }

  @Override
  public void setCharacterStream(String p0, Reader p1, int p2) throws SQLException {
    delegate.setCharacterStream(p0, p1, p2);
  }

  @Override
  public void setCharacterStream(String p0, Reader p1, long p2) throws SQLException {
    delegate.setCharacterStream(p0, p1, p2);
  }

  @Override
  public void setCharacterStream(String p0, Reader p1) throws SQLException {
    delegate.setCharacterStream(p0, p1);
  }

  @Override
  public void setClob(String p0, Reader p1, long p2) throws SQLException {
    delegate.setClob(p0, p1, p2);
  }

  @Override
  public void setClob(String p0, Reader p1) throws SQLException {
    delegate.setClob(p0, p1);
  }

  @Override
  public void setClob(String p0, Clob p1) throws SQLException {
    delegate.setClob(p0, p1);
  }

  @Override
  public void setDate(String p0, Date p1, Calendar p2) throws SQLException {
    delegate.setDate(p0, p1, p2);
  }

  @Override
  public void setDate(String p0, Date p1) throws SQLException {
    delegate.setDate(p0, p1);
  }

  @Override
  public void setDouble(String p0, double p1) throws SQLException {
    delegate.setDouble(p0, p1);
  }

  @Override
  public void setFloat(String p0, float p1) throws SQLException {
    delegate.setFloat(p0, p1);
  }

  @Override
  public void setInt(String p0, int p1) throws SQLException {
    delegate.setInt(p0, p1);
  }

  @Override
  public void setLong(String p0, long p1) throws SQLException {
    delegate.setLong(p0, p1);
  }

  @Override
  public void setNCharacterStream(String p0, Reader p1, long p2) throws SQLException {
    delegate.setNCharacterStream(p0, p1, p2);
  }

  @Override
  public void setNCharacterStream(String p0, Reader p1) throws SQLException {
    delegate.setNCharacterStream(p0, p1);
  }

  @Override
  public void setNClob(String p0, Reader p1, long p2) throws SQLException {
    delegate.setNClob(p0, p1, p2);
  }

  @Override
  public void setNClob(String p0, Reader p1) throws SQLException {
    delegate.setNClob(p0, p1);
  }

  @Override
  public void setNClob(String p0, NClob p1) throws SQLException {
    delegate.setNClob(p0, p1);
  }

  @Override
  public void setNString(String p0, String p1) throws SQLException {
    delegate.setNString(p0, p1);
  }

  @Override
  public void setNull(String p0, int p1, String p2) throws SQLException {
    delegate.setNull(p0, p1, p2);
  }

  @Override
  public void setNull(String p0, int p1) throws SQLException {
    delegate.setNull(p0, p1);
  }

  @Override
  public void setObject(String p0, Object p1, int p2, int p3) throws SQLException {
    delegate.setObject(p0, p1, p2, p3);
  }

  @Override
  public void setObject(String p0, Object p1, int p2) throws SQLException {
    delegate.setObject(p0, p1, p2);
  }

  @Override
  public void setObject(String p0, Object p1, SQLType p2, int p3) throws SQLException {
    delegate.setObject(p0, p1, p2, p3);
  }

  @Override
  public void setObject(String p0, Object p1, SQLType p2) throws SQLException {
    delegate.setObject(p0, p1, p2);
  }

  @Override
  public void setObject(String p0, Object p1) throws SQLException {
    delegate.setObject(p0, p1);
  }

  @Override
  public void setRowId(String p0, RowId p1) throws SQLException {
    delegate.setRowId(p0, p1);
  }

  @Override
  public void setSQLXML(String p0, SQLXML p1) throws SQLException {
    delegate.setSQLXML(p0, p1);
  }

  @Override
  public void setShort(String p0, short p1) throws SQLException {
    delegate.setShort(p0, p1);
  }

  @Override
  public void setString(String p0, String p1) throws SQLException {
    delegate.setString(p0, p1);
  }

  @Override
  public void setTime(String p0, Time p1, Calendar p2) throws SQLException {
    delegate.setTime(p0, p1, p2);
  }

  @Override
  public void setTime(String p0, Time p1) throws SQLException {
    delegate.setTime(p0, p1);
  }

  @Override
  public void setTimestamp(String p0, Timestamp p1, Calendar p2) throws SQLException {
    delegate.setTimestamp(p0, p1, p2);
  }

  @Override
  public void setTimestamp(String p0, Timestamp p1) throws SQLException {
    delegate.setTimestamp(p0, p1);
  }

  @Override
  public void setURL(String p0, URL p1) throws SQLException {
    delegate.setURL(p0, p1);
  }

  @Override
  public boolean wasNull() throws SQLException {
    return delegate.wasNull();
  }
}
