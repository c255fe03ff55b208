package dev.fencing.spring.internal;

import dev.fencing.schema.FenceSchema;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The library's refusals of writes it cannot fence, told in the terms of a Spring Boot application:
 * the {@code fencing.*} properties instead of {@code FenceOptions} and the migrations CLI. The one
 * place that recognizes such a refusal (by SQLState and origin) and words its way out.
 */
public final class BootRefusals {

  /** SQLState of a statement fencing-jdbc refuses to send (feature not supported). */
  static final String REFUSED = "0A000";

  /** How fencing-jdbc's refusals of plain SQL begin. */
  static final String LIBRARY_REFUSAL = "fencing refused";

  /** The ways out of a refused plain-SQL write, with the starter's properties. */
  static final String BOOT_WAYS_OUT =
      "With Spring Boot: list the table in fencing.migrations.enforce, which installs the"
          + " enforcement trigger and turns fencing.trigger-mode on (writes of JdbcTemplate, JPA and"
          + " Spring Data then need no rewriting), or write the statement with"
          + " dev.fencing.jdbc.GuardedStatements or dev.fencing.jdbc.jooq.FencedDsl.";

  /** The way out of a write refused by a strictly enforced table's trigger. */
  static final String BOOT_TRIGGER_MODE =
      "With Spring Boot: write it inside a @Fenced method or a ShedLock task, with"
          + " fencing.trigger-mode=true (the default when fencing.migrations.enforce names a table),"
          + " so that fenced connections carry the registration the trigger checks.";

  /** Library wording and its Spring Boot equivalent. */
  private static final String[][] PROPERTIES = {
    {"FenceOptions.plainSql() is REFUSE", "fencing.plain-sql=refuse"},
    {"FenceOptions.PlainSql.REFUSE", "fencing.plain-sql=refuse"},
    {"FenceOptions.endStaleBlockers", "fencing.end-stale-blockers"},
    {
      "wrap the data source with FenceOptions.defaults().withTriggerMode(true)",
      "set fencing.trigger-mode=true"
    },
    {
      "wrap the data source with FenceOptions.withTriggerMode(true)",
      "set fencing.trigger-mode=true"
    },
  };

  private BootRefusals() {}

  /**
   * Returns the message an application should see for {@code refusal}, if it is fencing's refusal
   * of a write it cannot fence; else null.
   *
   * @param refusal one exception of a cause chain
   * @return the message, or null
   */
  public static String forBoot(SQLException refusal) {
    String message = refusal.getMessage() == null ? "" : refusal.getMessage();
    if (UnscopedWrites.Refusal.class.isInstance(refusal)) {
      return message;
    }
    if (FenceSchema.SQLSTATE_NO_TOKEN.equals(refusal.getSQLState())) {
      return withoutLibraryAdvice(message)
          + " (SQLState "
          + FenceSchema.SQLSTATE_NO_TOKEN
          + ") "
          + BOOT_TRIGGER_MODE;
    }
    if (REFUSED.equals(refusal.getSQLState())
        && message.toLowerCase(Locale.ROOT).startsWith(LIBRARY_REFUSAL)) {
      return withoutLibraryAdvice(message) + " " + BOOT_WAYS_OUT;
    }
    return null;
  }

  /**
   * The message with the library's own configuration advice (sentences naming {@code FenceOptions},
   * the migrations CLI or the data source wrapper) left out, and the property names it has
   * equivalents for replaced.
   */
  static String withoutLibraryAdvice(String message) {
    String text = message;
    for (String[] property : PROPERTIES) {
      text = text.replace(property[0], property[1]);
    }
    List<String> kept = new ArrayList<>();
    for (String sentence : sentences(text)) {
      if (!sentence.isEmpty() && !namesLibraryConfiguration(sentence)) {
        kept.add(sentence);
      }
    }
    return String.join(" ", kept).trim();
  }

  private static boolean namesLibraryConfiguration(String sentence) {
    return sentence.contains("FenceOptions")
        || sentence.contains("--enforce")
        || sentence.contains("Write it with dev.fencing.jdbc.GuardedStatements")
        || sentence.contains("wrap the data source");
  }

  /**
   * Splits at ". ", "; " and line ends outside double quotes (the quoted statement stays whole): a
   * sentence keeps its end mark.
   */
  static List<String> sentences(String text) {
    List<String> out = new ArrayList<>();
    StringBuilder current = new StringBuilder();
    boolean quoted = false;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      current.append(c);
      if (c == '"') {
        quoted = !quoted;
      } else if (!quoted && c == '\n') {
        out.add(current.toString().trim());
        current.setLength(0);
      } else if (!quoted
          && (c == '.' || c == ';')
          && i + 1 < text.length()
          && text.charAt(i + 1) == ' ') {
        out.add(current.toString().trim());
        current.setLength(0);
      }
    }
    if (current.length() > 0) {
      out.add(current.toString().trim());
    }
    return out;
  }
}
