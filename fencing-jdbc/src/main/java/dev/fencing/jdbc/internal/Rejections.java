package dev.fencing.jdbc.internal;

import dev.fencing.core.Lease;
import dev.fencing.core.LeaseLostException;
import dev.fencing.core.LossReason;
import dev.fencing.jdbc.FenceObserver;
import dev.fencing.jdbc.LeaseLostSQLException;
import dev.fencing.jdbc.StaleTokenException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The one rejection path of fenced writes: a lease the JVM knows lost refuses the JDBC call; a
 * database refusal is translated; a guarded write that affected no row is classified with one read
 * of the fence. Every stale refusal of a newer holder marks the lease lost at once (listeners fire
 * now, not at the next heartbeat) and is told to the observer.
 */
public final class Rejections {

  private static final String SERIALIZATION_FAILURE = "40001";

  /** How long a serialization failure waits for the fence read on another connection. */
  private static final Duration READ_BOUND = Duration.ofMillis(250);

  private Rejections() {}

  /**
   * Refuses a JDBC call of {@code lease}'s scope when the lease is known lost.
   *
   * @param lease the scope's lease
   * @throws LeaseLostSQLException if the lease is known lost
   */
  public static void checkHeld(Lease lease) throws LeaseLostSQLException {
    try {
      lease.checkHeld();
    } catch (LeaseLostException lost) {
      throw new LeaseLostSQLException(lost);
    }
  }

  /** Reads the token the fence holds for a resource, outside the failed write's transaction. */
  @FunctionalInterface
  public interface FenceReader {
    /**
     * Reads the fence.
     *
     * @param resource the resource
     * @return the token registered, if any
     * @throws SQLException if the read failed
     */
    OptionalLong currentToken(String resource) throws SQLException;
  }

  /**
   * A driver error of a scoped call, as the library reports it ({@link FenceClassifier#translate}).
   * A serialization failure (SQLState 40001: under REPEATABLE READ or SERIALIZABLE, the fence row
   * moved after the transaction's snapshot) is a {@link StaleTokenException} when the fence, read
   * with {@code reader} outside the failed transaction, names a newer holder; else it stays as it
   * was (transient: a retry may succeed).
   */
  static SQLException translated(
      SQLException failure,
      Lease lease,
      boolean triggerMode,
      FenceObserver observer,
      FenceReader reader) {
    SQLException translated = FenceClassifier.translate(failure, lease, triggerMode);
    if (translated instanceof StaleTokenException stale) {
      return reported(stale, lease, observer);
    }
    if (lease != null && SERIALIZATION_FAILURE.equals(failure.getSQLState())) {
      try {
        OptionalLong current = readBounded(reader, lease.resource());
        if (current.isPresent() && current.getAsLong() > lease.token().value()) {
          return reported(
              StaleTokenException.rejected(
                  lease.resource(), lease.token().value(), current.getAsLong(), failure),
              lease,
              observer);
        }
      } catch (RuntimeException | TimeoutException | ExecutionException read) {
        failure.addSuppressed(read);
      } catch (InterruptedException interrupted) {
        Thread.currentThread().interrupt();
        failure.addSuppressed(interrupted);
      }
    }
    return translated;
  }

  /**
   * A guarded write of {@code lease} affected no row: reads the fence on {@code connection} (in the
   * write's transaction) and throws unless it names the lease (then no row matched).
   *
   * @throws StaleTokenException if the fence names another holder, or none
   * @throws SQLException if the read failed
   */
  static void classifyNoRows(
      Connection connection, String readFence, Lease lease, FenceObserver observer)
      throws SQLException {
    try {
      requireFenceNames(connection, readFence, lease);
    } catch (StaleTokenException stale) {
      throw reported(stale, lease, observer);
    }
  }

  /**
   * Reads the fence with {@code readFence} and throws unless it names {@code lease}; nothing is
   * marked or told (a registration's check: the lease manager decides what a refusal means).
   *
   * @throws StaleTokenException if the fence names another registration, or none
   * @throws SQLException if the read failed
   */
  static void requireFenceNames(Connection connection, String readFence, Lease lease)
      throws SQLException {
    long current = 0;
    String leaseId = null;
    try (PreparedStatement read = connection.prepareStatement(readFence)) {
      read.setString(1, lease.resource());
      try (ResultSet row = read.executeQuery()) {
        if (row.next()) {
          current = row.getLong(1);
          leaseId = row.getString(2);
        }
      }
    }
    FenceClassifier.requireNoSuchRow(lease, current, leaseId);
  }

  /**
   * The verdict on a write of {@code lease} that affected no row, from the fence row the caller
   * read.
   *
   * @param lease the writer's lease
   * @param current the token the fence holds, 0 if it has no row
   * @param leaseId the lease id the fence holds, null if no row
   * @param observer told of the rejection
   * @throws StaleTokenException unless the fence names {@code lease}
   */
  public static void classify(Lease lease, long current, String leaseId, FenceObserver observer)
      throws StaleTokenException {
    try {
      FenceClassifier.requireNoSuchRow(lease, current, leaseId);
    } catch (StaleTokenException stale) {
      throw reported(stale, lease, observer);
    }
  }

  /**
   * Reads the fence on another connection, waiting at most {@link #READ_BOUND}: with every pooled
   * connection in use (a pool of one, held by the failed transaction) the read cannot start, and
   * the failure then stays as the driver reported it. A read that starts late still ends and gives
   * its connection back.
   */
  private static OptionalLong readBounded(FenceReader reader, String resource)
      throws InterruptedException, ExecutionException, TimeoutException {
    CompletableFuture<OptionalLong> read = new CompletableFuture<>();
    Thread thread =
        new Thread(
            () -> {
              try {
                read.complete(reader.currentToken(resource));
              } catch (SQLException | RuntimeException e) {
                read.completeExceptionally(e);
              }
            },
            "fencing-fence-read");
    thread.setDaemon(true);
    thread.start();
    return read.get(READ_BOUND.toMillis(), TimeUnit.MILLISECONDS);
  }

  private static StaleTokenException reported(
      StaleTokenException stale, Lease lease, FenceObserver observer) {
    if (lease != null && stale.reason() == StaleTokenException.Reason.SUPERSEDED) {
      lease.markLost(LossReason.SUPERSEDED);
    }
    try {
      observer.onWriteRejected(stale);
    } catch (RuntimeException e) {
      stale.addSuppressed(e);
    }
    return stale;
  }
}
