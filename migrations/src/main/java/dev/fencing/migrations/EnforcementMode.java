package dev.fencing.migrations;

/**
 * How the {@code fencing_enforce} trigger treats a write that carries no fencing token (the setting
 * {@code fencing.token} is unset or empty). A write that does carry a token is checked against the
 * fence in both modes.
 */
public enum EnforcementMode {
  /** A token-less write is rejected with SQLSTATE {@code ZF003}. */
  STRICT("strict"),
  /** A token-less write goes through untouched (its {@code fence_token} is not stamped). */
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
