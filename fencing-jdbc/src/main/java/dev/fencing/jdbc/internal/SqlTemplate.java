package dev.fencing.jdbc.internal;

import java.util.ArrayList;
import java.util.List;

/**
 * A rewritten statement with slots for one registration's resource, token, lease id and idle
 * timeout. Built once per SQL string; filling the slots is string joining of validated literals, so
 * a new lease costs no parsing or rendering. The last filled form is kept, since a job runs many
 * statements under one lease.
 */
final class SqlTemplate implements PlainDmlGuard.Plan {

  static final char TOKEN = 't';
  static final char RESOURCE = 'r';
  static final char LEASE = 'l';
  static final char IDLE_TIMEOUT = 'i';

  private record Filled(PlainDmlGuard.Registration registration, PlainDmlGuard.Guarded sql) {}

  private final String[] parts;
  private final char[] slots;
  private final int length;
  private volatile Filled last;

  private SqlTemplate(String[] parts, char[] slots) {
    this.parts = parts;
    this.slots = slots;
    int total = 0;
    for (String part : parts) {
      total += part.length();
    }
    this.length = total + slots.length * 40;
  }

  /**
   * Splits rendered SQL at the occurrences of {@code marker} followed by a slot letter.
   *
   * @param rendered SQL in which {@code marker} occurs only where a slot was rendered
   * @param marker a string that does not occur in the statement the SQL was rendered from
   * @throws IllegalStateException if a slot was rendered quoted or with an unknown letter
   */
  static SqlTemplate split(String rendered, String marker) {
    List<String> parts = new ArrayList<>();
    StringBuilder slots = new StringBuilder();
    int from = 0;
    for (int at = rendered.indexOf(marker); at >= 0; at = rendered.indexOf(marker, from)) {
      int letter = at + marker.length();
      char slot = letter < rendered.length() ? rendered.charAt(letter) : '?';
      boolean quoted =
          at > 0 && (rendered.charAt(at - 1) == '"' || rendered.charAt(at - 1) == '\'');
      if ((slot != TOKEN && slot != RESOURCE && slot != LEASE && slot != IDLE_TIMEOUT) || quoted) {
        throw new IllegalStateException("a fencing slot was rendered unexpectedly: " + rendered);
      }
      parts.add(rendered.substring(from, at));
      slots.append(slot);
      from = letter + 1;
    }
    parts.add(rendered.substring(from));
    return new SqlTemplate(parts.toArray(String[]::new), slots.toString().toCharArray());
  }

  /** The number of slots, for checks. */
  int slotCount() {
    return slots.length;
  }

  @Override
  public PlainDmlGuard.Result resolve(PlainDmlGuard.Registration registration) {
    Filled filled = last;
    if (filled != null && filled.registration().equals(registration)) {
      return filled.sql();
    }
    StringBuilder sql = new StringBuilder(length);
    for (int i = 0; i < slots.length; i++) {
      sql.append(parts[i]);
      sql.append(
          switch (slots[i]) {
            case TOKEN -> registration.tokenLiteral();
            case RESOURCE -> registration.resourceLiteral();
            case IDLE_TIMEOUT -> registration.idleTimeoutLiteral();
            default -> registration.leaseIdLiteral();
          });
    }
    sql.append(parts[slots.length]);
    PlainDmlGuard.Guarded guarded = new PlainDmlGuard.Guarded(sql.toString());
    last = new Filled(registration, guarded);
    return guarded;
  }
}
