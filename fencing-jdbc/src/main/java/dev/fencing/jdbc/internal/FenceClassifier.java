package dev.fencing.jdbc.internal;

import dev.fencing.core.Lease;
import dev.fencing.jdbc.StaleTokenException;
import dev.fencing.schema.FenceSchema;
import java.sql.SQLException;
import java.util.Optional;

/**
 * The one place that decides what a refusal means: a write that affected no row, a database error,
 * or a registration the fence turned down is either {@link Verdict#STALE stale}, from a lease
 * {@link Verdict#NOT_REGISTERED never registered}, a write that matched {@link Verdict#NO_SUCH_ROW
 * no row} while the fence names the writer, or {@link Verdict#OTHER something else}. Used by {@code
 * ResourceFence}, the fenced connection and its statements, and {@code FencedDsl}.
 *
 * <p>Database errors are read through pgjdbc's server error fields (SQLState, detail); with another
 * driver only the SQLState is known, and the exception says that the figures are missing.
 */
public final class FenceClassifier {

  /** What a refusal means. */
  public enum Verdict {
    /** A newer holder registered, or the fence names another lease with the same token. */
    STALE,
    /** The writer's lease was never registered: the fence holds a lower token, or none. */
    NOT_REGISTERED,
    /** The fence names the writer; the write simply matched no row. */
    NO_SUCH_ROW,
    /** Not a fencing refusal: {@link #translate} passes such errors on unchanged. */
    OTHER
  }

  private static final boolean PGJDBC = present("org.postgresql.util.PSQLException");

  private FenceClassifier() {}

  /**
   * Classifies a write (or registration) of {@code lease} that the database did not apply, from the
   * fence's row read afterwards.
   *
   * @param lease the writer's lease
   * @param current the token the fence holds, 0 if it has no row for the resource
   * @param currentLeaseId the lease id the fence holds, null if no row
   * @return the verdict, never {@link Verdict#OTHER}
   */
  public static Verdict ofFence(Lease lease, long current, String currentLeaseId) {
    long attempted = lease.token().value();
    if (current < attempted) {
      return Verdict.NOT_REGISTERED;
    }
    if (current == attempted && lease.leaseId().equals(currentLeaseId)) {
      return Verdict.NO_SUCH_ROW;
    }
    return Verdict.STALE;
  }

  /**
   * Throws the refusal unless the fence names {@code lease} (then the write just matched no row).
   *
   * @param lease the writer's lease
   * @param current the token the fence holds, 0 if none
   * @param currentLeaseId the lease id the fence holds, null if none
   * @throws StaleTokenException if the verdict is stale or never registered
   */
  public static void requireNoSuchRow(Lease lease, long current, String currentLeaseId)
      throws StaleTokenException {
    if (ofFence(lease, current, currentLeaseId) != Verdict.NO_SUCH_ROW) {
      throw StaleTokenException.rejected(lease.resource(), lease.token(), current);
    }
  }

  /**
   * Returns the error as the library reports it: the fence's refusal (SQLState ZF001) as a {@link
   * StaleTokenException} with the database's figures; a token-less write on a strictly enforced
   * table (ZF003) inside a scope as an error that names the option to switch on; anything else
   * unchanged.
   *
   * @param failure the driver's error
   * @param lease the scope's lease, or null outside a scope
   * @param triggerMode whether the connection carries the registration for the trigger
   * @return the error to throw
   */
  public static SQLException translate(SQLException failure, Lease lease, boolean triggerMode) {
    if (failure instanceof StaleTokenException) {
      return failure;
    }
    Optional<ServerError> stale = serverError(failure, FenceSchema.SQLSTATE_STALE_TOKEN);
    if (stale.isPresent()) {
      Optional<Figures> figures = stale.get().figures();
      if (figures.isPresent()) {
        Figures f = figures.get();
        return StaleTokenException.rejected(f.resource(), f.attempted(), f.current(), failure);
      }
      return new StaleTokenException(
          stale.get().message()
              + " (the current token is unknown: "
              + (PGJDBC
                  ? "the error carried no detail"
                  : "the driver is not pgjdbc, so the server's error fields cannot be read")
              + ")",
          lease == null ? null : lease.resource(),
          lease == null ? 0 : lease.token().value(),
          0,
          failure);
    }
    if (lease != null && serverError(failure, FenceSchema.SQLSTATE_NO_TOKEN).isPresent()) {
      String message =
          triggerMode
              ? "the enforcement trigger saw no fencing token although this connection carries the"
                  + " registration of \""
                  + lease.resource()
                  + "\" in every transaction it sees: the transaction was probably ended or rolled"
                  + " back to a savepoint behind the wrapper's back (through the unwrapped driver"
                  + " connection)"
              : "the table is strictly enforced by the fencing trigger, which needs the"
                  + " registration as settings: wrap the data source with"
                  + " FenceOptions.withTriggerMode(true) (lease on \""
                  + lease.resource()
                  + "\", token "
                  + lease.token()
                  + ")";
      return new SQLException(
          message + "; database said: " + failure.getMessage(),
          FenceSchema.SQLSTATE_NO_TOKEN,
          failure);
    }
    return failure;
  }

  /** The resource, attempted and current token the trigger puts in its error's detail. */
  record Figures(String resource, long attempted, long current) {}

  /** An error raised by the server with a given SQLState. */
  record ServerError(String message, Optional<Figures> figures) {}

  private static Optional<ServerError> serverError(SQLException failure, String sqlState) {
    for (Throwable t = failure; t != null; t = next(t)) {
      if (t instanceof SQLException sql && sqlState.equals(sql.getSQLState())) {
        if (PGJDBC) {
          Optional<ServerError> read = PgjdbcErrors.read(sql);
          if (read.isPresent()) {
            return read;
          }
        }
        return Optional.of(
            new ServerError(firstLine(sql.getMessage()), figuresInMessage(sql.getMessage())));
      }
    }
    return Optional.empty();
  }

  private static Throwable next(Throwable t) {
    if (t instanceof SQLException sql && sql.getNextException() != null) {
      return sql.getNextException();
    }
    return t.getCause() == t ? null : t.getCause();
  }

  /**
   * Parses the detail the enforcement trigger writes, {@code resource=R;attempted=A;current=C}: a
   * field made for machines, not the message.
   */
  static Optional<Figures> figures(String detail) {
    if (detail == null) {
      return Optional.empty();
    }
    String resource = null;
    Long attempted = null;
    Long current = null;
    for (String part : detail.split(";")) {
      int eq = part.indexOf('=');
      if (eq < 0) {
        return Optional.empty();
      }
      String value = part.substring(eq + 1);
      try {
        switch (part.substring(0, eq)) {
          case "resource" -> resource = value;
          case "attempted" -> attempted = Long.parseLong(value);
          case "current" -> current = Long.parseLong(value);
          default -> {
            return Optional.empty();
          }
        }
      } catch (NumberFormatException e) {
        return Optional.empty();
      }
    }
    if (resource == null || attempted == null || current == null) {
      return Optional.empty();
    }
    return Optional.of(new Figures(resource, attempted, current));
  }

  /**
   * The figures a database without a detail field (MariaDB's SIGNAL) puts at the end of its
   * message, in brackets: {@code ... [resource=R;attempted=A;current=C]}.
   */
  static Optional<Figures> figuresInMessage(String message) {
    if (message == null) {
      return Optional.empty();
    }
    int open = message.lastIndexOf("[resource=");
    int close = open < 0 ? -1 : message.indexOf(']', open);
    return close < 0 ? Optional.empty() : figures(message.substring(open + 1, close));
  }

  private static String firstLine(String message) {
    if (message == null) {
      return "stale fencing token";
    }
    int newline = message.indexOf('\n');
    return newline < 0 ? message : message.substring(0, newline);
  }

  private static boolean present(String className) {
    try {
      Class.forName(className, false, FenceClassifier.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  /** Reads pgjdbc's server error fields; loaded only when pgjdbc is present. */
  private static final class PgjdbcErrors {
    static Optional<ServerError> read(SQLException sql) {
      if (!(sql instanceof org.postgresql.util.PSQLException psql)) {
        return Optional.empty();
      }
      org.postgresql.util.ServerErrorMessage server = psql.getServerErrorMessage();
      if (server == null) {
        return Optional.empty();
      }
      return Optional.of(new ServerError(server.getMessage(), figures(server.getDetail())));
    }
  }
}
