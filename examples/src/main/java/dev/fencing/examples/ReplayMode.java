package dev.fencing.examples;

import java.util.Arrays;
import java.util.Optional;

/** The locking strategies the replay compares, in the order the incident went through them. */
public enum ReplayMode {
  /** Mode 1: no lock; two instances overlap during a rolling deploy. */
  NO_LOCK(1, "no lock"),
  /** Mode 2: {@code SET NX PX} + unconditional {@code DEL}; the job outlives the TTL. */
  NAIVE_LOCK(2, "naive lock (SET NX PX, DEL)"),
  /**
   * Mode 3: fencing-core's lease (random value + token, compare-and-delete, heartbeat); no fencing
   * in the database.
   */
  TOKEN_HEARTBEAT(3, "token + heartbeat, no fencing"),
  /**
   * Mode 4: mode 3 plus fenced writes ({@code FencedLeaseManager}, {@code FencedDataSource}, {@code
   * Fencing.call(lease, ...)}, the enforcement trigger).
   */
  FENCED(4, "fenced");

  private final int number;
  private final String label;

  ReplayMode(int number, String label) {
    this.number = number;
    this.label = label;
  }

  public int number() {
    return number;
  }

  public String label() {
    return label;
  }

  public static Optional<ReplayMode> byNumber(int number) {
    return Arrays.stream(values()).filter(m -> m.number == number).findFirst();
  }
}
