package dev.fencing.examples;

import java.util.Optional;

/** Mode 1: no lock at all, as before the incident. Every trigger runs. */
public final class NoLockStrategy implements LockStrategy {

  @Override
  public String name() {
    return "no lock";
  }

  @Override
  public Optional<Hold> tryAcquire(String runId) {
    return Optional.of(() -> Release.NOTHING_RELEASED);
  }
}
