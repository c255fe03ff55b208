package dev.fencing.examples;

import java.util.Arrays;
import java.util.Optional;

/** The locking strategies the replay compares, in the order the incident went through them. */
public enum ReplayMode {
  /** Mode 1: no lock; two instances overlap during a rolling deploy. */
  NO_LOCK(1, "no lock", true),
  /** Mode 2: {@code SET NX PX} + unconditional {@code DEL}; the job outlives the TTL. */
  NAIVE_LOCK(2, "naive lock (SET NX PX, DEL)", true),
  /**
   * Mode 3: random value + token, compare-and-delete, heartbeat; no fencing in the database.
   * Placeholder until fencing-core's {@code LeaseManager} is wired in.
   */
  TOKEN_HEARTBEAT(3, "token + heartbeat, no fencing", false),
  /**
   * Mode 4: mode 3 plus fenced writes ({@code FencedDataSource}, {@code Fencing.run(lease, ...)}).
   * Placeholder until fencing-jdbc is wired in.
   */
  FENCED(4, "fenced", false);

  private final int number;
  private final String label;
  private final boolean implemented;

  ReplayMode(int number, String label, boolean implemented) {
    this.number = number;
    this.label = label;
    this.implemented = implemented;
  }

  public int number() {
    return number;
  }

  public String label() {
    return label;
  }

  /** False for the placeholders that wait for the library. */
  public boolean implemented() {
    return implemented;
  }

  public static Optional<ReplayMode> byNumber(int number) {
    return Arrays.stream(values()).filter(m -> m.number == number).findFirst();
  }
}
