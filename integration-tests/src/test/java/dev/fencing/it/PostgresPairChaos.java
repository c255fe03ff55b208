package dev.fencing.it;

import dev.fencing.it.failover.PgReplicaPair;
import java.sql.SQLException;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * PostgreSQL as a private primary with an asynchronous hot standby ({@link PgReplicaPair}), reached
 * through a pgjdbc multi-host URL with {@code targetServerType=primary} by the run and its workers,
 * so that the nemesis can fail over mid-run ({@link ChaosRun.Fault#PG_FAILOVER}). Everything else
 * is {@link PostgresChaos}. Close it after the run: it stops both servers.
 */
final class PostgresPairChaos extends PostgresChaos implements AutoCloseable {

  private final PgReplicaPair pair;
  private int failOvers;
  private CompletableFuture<Void> rebuilding = CompletableFuture.completedFuture(null);

  private PostgresPairChaos(PgReplicaPair pair) {
    super(pair.multiHostUrl());
    this.pair = pair;
  }

  /** Starts a primary and an asynchronous standby on free ports. */
  static PostgresPairChaos start() {
    return new PostgresPairChaos(PgReplicaPair.start(false));
  }

  /**
   * The standby stops taking WAL (stopped cleanly) for 0.2-0.8 s while the workers go on committing
   * and registering; then the primary is lost, the standby started and promoted. The lost primary
   * is rebuilt as the new standby in the background, so that the nemesis goes on meanwhile; until
   * it streams, the fault is skipped (null). What the standby missed is gone: registrations among
   * it, so the fence would go back in time but for its epoch.
   */
  @Override
  public synchronized String promoteStandby(Random random) throws SQLException {
    if (!rebuilding.isDone()) {
      return null;
    }
    rebuilding.join(); // a failed rebuild fails the fault here
    long lagMs = 200 + random.nextInt(600);
    pair.stopShipping();
    ChaosRun.sleep(lagMs);
    long started = System.nanoTime();
    pair.failOver();
    long promotedMs = (System.nanoTime() - started) / 1_000_000;
    rebuilding =
        CompletableFuture.runAsync(
            () -> {
              try {
                pair.rebuildStandby();
              } catch (SQLException e) {
                throw new IllegalStateException("rebuilding the standby: " + e.getMessage(), e);
              }
            });
    failOvers++;
    return "fail-over "
        + failOvers
        + ": the standby missed "
        + lagMs
        + " ms of WAL, promoted in "
        + promotedMs
        + " ms; a new standby is being built";
  }

  /** Waits for a rebuild still under way, then stops both servers. */
  @Override
  public synchronized void close() {
    try {
      rebuilding.get(2, TimeUnit.MINUTES);
    } catch (ExecutionException | TimeoutException e) {
      System.err.println("[chaos] the last standby rebuild: " + e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      pair.close();
    }
  }
}
