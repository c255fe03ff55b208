package dev.fencing.migrations;

/**
 * How the {@code fencing_enforce} and {@code fencing_truncate} triggers treat a write that carries
 * no fencing token (the setting {@code fencing.token} is unset or empty). A write that does carry a
 * token is checked against the fence in both modes.
 */
public enum EnforcementMode {
  /** A token-less write is rejected with SQLSTATE {@code ZF003}, and so is every TRUNCATE. */
  STRICT("strict"),
  /**
   * A token-less write goes through, but cannot move the row's {@code fence_token} and {@code
   * fence_resource} (an UPDATE keeps them, an INSERT gets 0 and NULL) unless it writes exactly the
   * current registration of a resource, as a guarded statement does. A token-less TRUNCATE goes
   * through; one carrying a token is rejected with {@code ZF003}.
   */
  LENIENT("lenient");

  private final String triggerArgument;

  EnforcementMode(String triggerArgument) {
    this.triggerArgument = triggerArgument;
  }

  /**
   * The argument passed to {@code enforce_fence()} in the trigger definition.
   *
   * @return {@code "strict"} or {@code "lenient"}
   */
  public String triggerArgument() {
    return triggerArgument;
  }
}
