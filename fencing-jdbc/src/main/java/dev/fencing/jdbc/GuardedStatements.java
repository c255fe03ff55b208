package dev.fencing.jdbc;

import dev.fencing.jdbc.internal.FencedConnection;
import dev.fencing.jdbc.internal.Rejections;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * Guarded statements for plain JDBC. Each factory returns an ordinary {@link PreparedStatement}
 * whose SQL carries both guards, so you bind your parameters at the indexes you wrote:
 *
 * <pre>{@code
 * try (PreparedStatement update =
 *     GuardedStatements.update(connection, "invoices", "status = ?", "id = ?")) {
 *   update.setString(1, "PAID");
 *   update.setLong(2, invoiceId);
 *   update.executeUpdate(); // throws StaleTokenException if a newer holder registered
 * }
 * }</pre>
 *
 * <p>The row guard sets {@code fence_token} to the writer's token and requires the stored one to be
 * no higher; the resource fence requires the fence to name the writer's registration and locks its
 * row {@code FOR SHARE} until commit, in the same statement (no extra round trip). A write that
 * affects no row is classified with one read: {@link StaleTokenException} if the fence moved on or
 * the lease was never registered, else it returns 0 (no such row). Every row of a JDBC batch
 * ({@code addBatch}/{@code executeBatch}) carries the same predicate; inside a transaction the
 * fence row is locked once before the batch and the rows then take the predicate's cheap branch (a
 * marker that only that lock sets, and only for that transaction), so the fence is looked up once
 * per transaction, not once per row.
 *
 * <p>The connection must come from a {@link FencedDataSource} inside a {@link Fencing} scope. Table
 * and column names must be plain identifiers ({@code [A-Za-z_][A-Za-z0-9_]*}, optionally {@code
 * schema.table}); they are quoted. The assignment and condition fragments are SQL you write, like
 * the text of any prepared statement: never build them from user input. They must stay in their
 * place, read the same way by the database whatever the session's settings: a fragment with a
 * comment (on MariaDB also {@code #} and any {@code --}), a {@code ;} outside a literal, a
 * parenthesis closed before it was opened (or never closed), or a backslash in a literal that
 * another setting would read as an escape (PostgreSQL: in {@code '...'} but not {@code E'...'},
 * since {@code standard_conforming_strings} can be switched off by any {@code SET}; MariaDB: in
 * {@code '...'} and {@code "..."}, and anywhere outside backquotes) is refused; bind such values as
 * parameters. Literals such as {@code 'a;b'}, {@code E'...'} and dollar quotes (PostgreSQL) are
 * left alone.
 */
public final class GuardedStatements {

  private GuardedStatements() {}

  /**
   * Prepares {@code UPDATE table SET assignments WHERE condition}, guarded.
   *
   * @param connection a connection from a {@link FencedDataSource} inside a scope
   * @param table the table, {@code name} or {@code schema.name}
   * @param assignments the SET list, for example {@code "status = ?, paid_at = ?"}
   * @param condition the WHERE condition, for example {@code "id = ?"}
   * @return the statement
   * @throws IllegalArgumentException if a name is not a plain identifier, or a fragment is null,
   *     blank or could escape its place (comment, {@code ;}, unbalanced parentheses)
   * @throws IllegalStateException if the connection is not fenced by a scope
   * @throws LeaseLostSQLException if the lease is already known lost (nothing reached the database)
   * @throws SQLException if preparing failed
   */
  public static PreparedStatement update(
      Connection connection, String table, String assignments, String condition)
      throws SQLException {
    FencedConnection fenced = fenced(connection);
    return fenced.prepareGuarded(fenced.guards().update(table, assignments, condition));
  }

  /**
   * Prepares {@code DELETE FROM table WHERE condition}, guarded.
   *
   * @param connection a connection from a {@link FencedDataSource} inside a scope
   * @param table the table
   * @param condition the WHERE condition
   * @return the statement
   * @throws IllegalArgumentException if the table name is invalid, or the condition is null, blank
   *     or could escape its place
   * @throws IllegalStateException if the connection is not fenced by a scope
   * @throws LeaseLostSQLException if the lease is already known lost (nothing reached the database)
   * @throws SQLException if preparing failed
   */
  public static PreparedStatement delete(Connection connection, String table, String condition)
      throws SQLException {
    FencedConnection fenced = fenced(connection);
    return fenced.prepareGuarded(fenced.guards().delete(table, condition));
  }

  /**
   * Prepares an INSERT of one row with one parameter per column, in order; {@code fence_token} is
   * set to the writer's token. It inserts nothing (and throws {@link StaleTokenException}) unless
   * the fence names the writer.
   *
   * @param connection a connection from a {@link FencedDataSource} inside a scope
   * @param table the table
   * @param columns the columns to insert, not including {@code fence_token}
   * @return the statement
   * @throws IllegalArgumentException if a name is invalid or no column is given
   * @throws IllegalStateException if the connection is not fenced by a scope
   * @throws LeaseLostSQLException if the lease is already known lost (nothing reached the database)
   * @throws SQLException if preparing failed
   */
  public static PreparedStatement insert(Connection connection, String table, String... columns)
      throws SQLException {
    FencedConnection fenced = fenced(connection);
    return fenced.prepareGuarded(
        fenced
            .guards()
            .insert(table, names("column", columns == null ? null : Arrays.asList(columns))));
  }

  /**
   * Prepares an upsert: INSERT of one row (one parameter per column), or on conflict on {@code
   * conflictColumns} an update of the other columns, only if the stored row was not written by a
   * newer holder ({@code ON CONFLICT ... DO UPDATE ... WHERE fence_token <= EXCLUDED.fence_token}).
   *
   * @param connection a connection from a {@link FencedDataSource} inside a scope
   * @param table the table
   * @param columns the columns to insert, not including {@code fence_token}
   * @param conflictColumns the unique key, a subset of {@code columns}
   * @return the statement
   * @throws IllegalArgumentException if a name is invalid, a list is empty, or a conflict column is
   *     not inserted
   * @throws IllegalStateException if the connection is not fenced by a scope
   * @throws LeaseLostSQLException if the lease is already known lost (nothing reached the database)
   * @throws SQLException if preparing failed
   */
  public static PreparedStatement upsert(
      Connection connection, String table, List<String> columns, List<String> conflictColumns)
      throws SQLException {
    FencedConnection fenced = fenced(connection);
    return fenced.prepareGuarded(
        fenced
            .guards()
            .upsert(table, names("column", columns), names("conflict column", conflictColumns)));
  }

  /** A copy of {@code names}, refusing a missing list or name with a message that names it. */
  private static List<String> names(String what, List<String> names) {
    if (names == null) {
      throw new IllegalArgumentException(what + "s must not be null");
    }
    for (int i = 0; i < names.size(); i++) {
      if (names.get(i) == null) {
        throw new IllegalArgumentException(what + " " + (i + 1) + " must not be null");
      }
    }
    return List.copyOf(names);
  }

  private static FencedConnection fenced(Connection connection) throws SQLException {
    Objects.requireNonNull(connection, "connection");
    if (!connection.isWrapperFor(FencedConnection.class)) {
      throw new IllegalStateException(
          "a guarded write needs a connection taken from a FencedDataSource inside"
              + " Fencing.run(lease, ...); this one is not fenced, so nothing was written");
    }
    FencedConnection fenced = connection.unwrap(FencedConnection.class);
    Rejections.checkHeld(fenced.lease());
    return fenced;
  }
}
