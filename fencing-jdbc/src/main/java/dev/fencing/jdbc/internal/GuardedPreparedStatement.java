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
import java.util.HashMap;
import java.util.Map;

/**
 * A guarded statement. Executed alone, or batched in auto-commit mode, it runs the form that
 * carries the row guard and the fence predicate. Batched inside a transaction, its rows go to the
 * form that carries the row guard and the transaction's verified marker; right before every such
 * batch, in the same transaction, the connection locks the fence row and sets the marker (or
 * refuses the batch), so no row can write without the database having checked the fence in this
 * transaction. A write that affected no row is classified with one read of the fence.
 *
 * <p>Parameters set before the first {@code addBatch} inside a transaction are remembered and
 * replayed onto the batched form; from then on they go straight to it.
 */
final class GuardedPreparedStatement extends FencedPreparedStatement<PreparedStatement> {

  /** One parameter assignment, replayable onto the batched form. */
  @FunctionalInterface
  private interface Binding {
    void apply(PreparedStatement statement) throws SQLException;
  }

  private final FenceSql.Guarded sql;
  private Map<Integer, Binding> bindings;
  private PreparedStatement batch;

  GuardedPreparedStatement(
      FencedConnection connection, PreparedStatement delegate, FenceSql.Guarded sql) {
    super(connection, delegate, false);
    this.sql = sql;
  }

  @Override
  <T> T execution(SqlCall<T> call) throws SQLException {
    T result = super.execution(call);
    if (affectedNoRow(result)) {
      connection.classifyNoRows();
    }
    return result;
  }

  @Override
  public void addBatch() throws SQLException {
    if (batch == null) {
      if (connection.getAutoCommit()) {
        delegate.addBatch();
        return;
      }
      batch = connection.prepareUnrouted(sql.batched());
      if (bindings != null) {
        for (Binding binding : bindings.values()) {
          binding.apply(batch);
        }
        bindings = null;
      }
    }
    batch.addBatch();
  }

  @Override
  public int[] executeBatch() throws SQLException {
    if (batch == null) {
      return super.executeBatch();
    }
    requireTransaction();
    return execution(
        () -> {
          connection.verifyBatch();
          return batch.executeBatch();
        });
  }

  @Override
  public long[] executeLargeBatch() throws SQLException {
    if (batch == null) {
      return super.executeLargeBatch();
    }
    requireTransaction();
    return execution(
        () -> {
          connection.verifyBatch();
          return batch.executeLargeBatch();
        });
  }

  private void requireTransaction() throws SQLException {
    if (connection.getAutoCommit()) {
      throw new SQLException(
          "this guarded statement was batched inside a transaction and cannot run in auto-commit"
              + " mode; prepare a new one");
    }
  }

  @Override
  public void clearBatch() throws SQLException {
    if (batch != null) {
      batch.clearBatch();
    }
    delegate.clearBatch();
  }

  @Override
  public void clearParameters() throws SQLException {
    if (bindings != null) {
      bindings.clear();
    }
    if (batch != null) {
      batch.clearParameters();
    }
    delegate.clearParameters();
  }

  @Override
  public void close() throws SQLException {
    try {
      if (batch != null) {
        batch.close();
      }
    } finally {
      delegate.close();
    }
  }

  private void bind(int index, Binding binding) throws SQLException {
    if (batch != null) {
      binding.apply(batch);
      return;
    }
    binding.apply(delegate);
    if (bindings == null) {
      bindings = new HashMap<>();
    }
    bindings.put(index, binding);
  }

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
